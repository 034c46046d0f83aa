// Routing through the mock with real signed deliveries: commands, hears, quick-reply clicks,
// mentions, middleware, the fall-through to message.received, and bad input at registration.
import { createBot, type MessageContext, UserClient } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import { createLoop, type Loop } from './harness.js';

const yesNo = [
  { actionId: 'yes', label: 'Yes', value: 'pick:yes' },
  { actionId: 'no', label: '/help', value: 'pick:no' },
];

/** A bot recording which route took each message. */
async function routed() {
  const loop = await createLoop();
  const took: string[] = [];
  loop.bot
    .command('/help', (ctx) => {
      took.push(`command ${ctx.command?.name} [${ctx.command?.args}]`);
    })
    .hears(/weather in (\w+)/i, (ctx) => {
      took.push(`hears ${ctx.match?.[1]}`);
    })
    .hears('ping', () => {
      took.push('hears ping');
    })
    .action('yes', (ctx) => {
      took.push(`action ${ctx.action?.actionId}=${ctx.action?.value} on ${ctx.action?.messageId}`);
    })
    .action(/^pick:/, (ctx) => {
      took.push(`action regex ${ctx.match?.[0]} ${ctx.action?.actionId}`);
    })
    .on('mention', (ctx) => {
      took.push(`mention ${ctx.text}`);
    })
    .on('message.received', (ctx) => {
      took.push(`message ${ctx.text} mentioned=${ctx.mentioned} group=${ctx.isGroup} direct=${ctx.isDirect}`);
    });
  return { loop, took };
}

async function clickable(loop: Loop) {
  // The bot replies with quick replies once, from a plain handler run outside the routes.
  const sent = await loop.bot.client.messages.send(loop.conversationId, {
    schema: 'svc.agent-send.v1',
    content: [
      { type: 'text', text: 'Pick' },
      {
        type: 'actions',
        layout: 'quick_replies',
        actions: yesNo.map((a) => ({
          actionId: a.actionId,
          label: a.label,
          behavior: { type: 'postback', value: a.value },
        })),
      },
    ],
  });
  return sent.message.id;
}

async function group(loop: Loop) {
  const { invite } = await loop.bot.client.groups.invite(
    { title: 'Team', user_ids: [loop.user.id], reason: 'Work' },
    { idempotencyKey: 'routing-invite' },
  );
  const user = new UserClient({ sessionToken: loop.sessionToken, ...loop.connection });
  const { conversation_id } = await user.invites.accept(invite.id);
  return conversation_id ?? '';
}

describe('routing', () => {
  it('sends each kind of message to its route, and the rest to message.received', async () => {
    const { loop, took } = await routed();
    await loop.post('/help me please');
    await loop.post('/HELP@echo_bot');
    await loop.post("what's the weather in Paris?");
    await loop.post('ping');
    await loop.post('ping pong');
    const messageId = await clickable(loop);
    loop.mock.clickAction({
      conversation_id: loop.conversationId,
      user_id: loop.user.id,
      message_id: messageId,
      action_id: 'yes',
    });
    await loop.mock.idle();
    expect(took).toEqual([
      'command /help [me please]',
      'command /help []',
      'hears Paris',
      'hears ping',
      'message ping pong mentioned=true group=false direct=true',
      `action yes=pick:yes on ${messageId}`,
    ]);
  });

  it('matches a command in any ASCII case only: a look-alike letter (the Kelvin sign) is not the command', async () => {
    const loop = await createLoop();
    const took: string[] = [];
    loop.bot
      .command('/kick', (ctx) => {
        took.push(`kick ${ctx.command?.name}`);
      })
      .command('/straße', (ctx) => {
        took.push(`straße ${ctx.command?.name}`);
      })
      .on('message.received', (ctx) => {
        took.push(`message ${ctx.text}`);
      });
    for (const text of ['/\u212Aick', '/KICK', '/kıck', '/STRASSE', '/straße now']) await loop.post(text);
    await loop.mock.idle();
    expect(took).toEqual([
      'message /\u212Aick',
      'kick /kick',
      'message /kıck',
      'message /STRASSE',
      'straße /straße',
    ]);
  });

  it('puts a click before a command, a command before hears, hears before a mention', async () => {
    const { loop, took } = await routed();
    const messageId = await clickable(loop);
    // The 'no' button's label is '/help': the click is an action first (the regex route on its value).
    loop.mock.clickAction({
      conversation_id: loop.conversationId,
      user_id: loop.user.id,
      message_id: messageId,
      action_id: 'no',
    });
    await loop.mock.idle();
    await loop.post('/help weather in Oslo');
    const groupId = await group(loop);
    const say = async (text: string) => {
      loop.mock.postUserMessage(groupId, { user_id: loop.user.id, text });
      await loop.mock.idle();
    };
    await say('@echo_bot weather in Rome');
    await say('@echo_bot are you there?');
    await say('just chatting');
    expect(took).toEqual([
      'action regex pick: no',
      'command /help [weather in Oslo]',
      'hears Rome',
      'mention @echo_bot are you there?',
      'message just chatting mentioned=false group=true direct=false',
    ]);
    // The conversation's kind was asked once, for the first message that named the bot there.
    const retrieves = loop.requests({ method: 'GET', path: new RegExp(`/v1/conversations/${groupId}$`) });
    expect(retrieves).toHaveLength(1);
  });

  it('runs middleware in registration order around the handlers; one that does not call next stops the event', async () => {
    const loop = await createLoop();
    const order: string[] = [];
    loop.bot
      .use(async (ctx, next) => {
        order.push(`a before ${ctx.event.type}`);
        await next();
        order.push('a after');
      })
      .use(async (ctx, next) => {
        order.push('b before');
        if ((ctx as MessageContext).text === 'secret') return;
        await next();
        order.push('b after');
      })
      .command('/go', () => {
        order.push('command');
      })
      .on('message.received', () => {
        order.push('handler');
      })
      .onAny(() => {
        order.push('any');
      });
    await loop.post('/go');
    await loop.post('secret');
    expect(order).toEqual([
      'a before message.received',
      'b before',
      'command',
      'any',
      'b after',
      'a after',
      'a before message.received',
      'b before',
      'a after',
    ]);
  });
});

describe('handlers of one event', () => {
  it('run one after another, a promise or a thenable waited for before the next, and fail the delivery when one throws', async () => {
    const loop = await createLoop();
    const steps: string[] = [];
    let fail = false;
    loop.bot
      .on('message.received', (ctx) => {
        steps.push(`sync ${ctx.text}`);
        if (fail) throw new Error('sync handler failed');
      })
      .on('message.received', async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        steps.push('async');
      })
      // A thenable that is not a Promise (a query builder, a library's own promise type).
      .on('message.received', () => ({
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        then(resolve: () => void) {
          setTimeout(() => {
            steps.push('thenable');
            resolve();
          }, 5);
        },
      }))
      .onAny((ctx) => {
        steps.push(`any ${ctx.event.type}`);
      });
    loop.bot.onError(() => undefined);
    await loop.post('one');
    expect(steps).toEqual(['sync one', 'async', 'thenable', 'any message.received']);
    fail = true;
    await loop.post('two');
    expect(steps.slice(4)).toEqual(['sync two']);
    expect(loop.mock.deliveries.filter((d) => d.type === 'message.received').map((d) => d.status)).toEqual([
      200, 500,
    ]);
  });
});

describe('bad input is a ValidationError naming the option, before any delivery', () => {
  const options = () => ({
    apiKey: 'ak_test',
    baseUrl: 'http://ams.test',
    webhookSecret: generateWebhookSecret(),
  });
  const field = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      expect((error as Error).name).toBe('ValidationError');
      return (error as { issues: { field: string }[] }).issues.map((issue) => issue.field);
    }
    throw new Error('did not throw');
  };

  it('at createBot', () => {
    expect(field(() => createBot({ ...options(), concurrency: 'parallel' as 'queue' }))).toEqual([
      'concurrency',
    ]);
    expect(field(() => createBot({ ...options(), debounceMs: -1 }))).toEqual(['debounceMs']);
    expect(field(() => createBot({ ...options(), lockTtlMs: 0 }))).toEqual(['lockTtlMs']);
  });

  it('at registration', () => {
    const bot = createBot(options());
    expect(field(() => bot.on('message.received', 'reply' as never))).toEqual(['handler']);
    expect(field(() => bot.use(undefined as never))).toEqual(['handler']);
    expect(field(() => bot.command('help', () => undefined))).toEqual(['command']);
    expect(field(() => bot.command('/two words', () => undefined))).toEqual(['command']);
    expect(field(() => bot.hears(/hi/g, () => undefined))).toEqual(['pattern']);
    expect(field(() => bot.action(/pick/y, () => undefined))).toEqual(['pattern']);
    expect(field(() => bot.hears('', () => undefined))).toEqual(['pattern']);
    expect(field(() => bot.action('yes', null as never))).toEqual(['handler']);
  });
});
