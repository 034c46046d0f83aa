// Questions (bot.question, ctx.ask) through the mock with real signed deliveries, on the memory store
// and on a real redis-server: several bot instances share one store, as processes behind one URL do;
// the mock's clock (the bots' `now`) jumps past deadlines. Each instance on Redis has a connection of
// its own. "Dropped" instances are simply no longer routed to, and new ones are made on the store.

import { type Bot, type BotStore, createBot, createMemoryStore, type MessageContext } from 'agent-messaging';
import { createRedisStore } from 'agent-messaging/redis';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { routedWorld } from '../store/bot-world.js';
import { connectClient, redisForFile, uniquePrefix } from '../store/redis-server.js';

const redis = redisForFile();

/** A store shared by the instances of one test: one object in memory, or one Redis prefix. */
type StoreMaker = () => Promise<{ fresh: () => Promise<BotStore> }>;

const memory: StoreMaker = async () => {
  const store = createMemoryStore();
  return { fresh: async () => store };
};
const onRedis: StoreMaker = async () => {
  const prefix = uniquePrefix('questions');
  return {
    // Every instance has its own connection (and subscriber), as a process would.
    fresh: async () => {
      const client = await connectClient(redis.server.url);
      const store = createRedisStore({ client, prefix });
      redis.cleanups.push(async () => {
        await store.close();
        client.destroy();
      });
      return store;
    },
  };
};

const TEN_MINUTES = 10 * 60_000;

/** A world of `count` instances of the refund bot on one store; deliveries go to `world.to`. */
async function questionWorld(
  makeStore: StoreMaker,
  count: number,
  wrap: (store: BotStore) => BotStore = (store) => store,
) {
  const stores = await makeStore();
  const bots: Bot[] = [];
  const world = { to: 0 };
  // Each user message's delivery as the mock sent it, to send again as a redelivery.
  const deliveredFor = new Map<string, Request>();
  const { mock, seed, connection, replies } = await routedWorld(async (request) => {
    const bot = bots[world.to];
    if (!bot) throw new Error(`no instance ${world.to}`);
    const body = (await request.clone().json()) as { message?: { id: string } };
    if (body.message) deliveredFor.set(body.message.id, request.clone());
    return bot.fetch(request);
  });
  const log: string[] = [];
  const asked: string[] = [];
  const failures: unknown[] = [];
  let failAnswers = 0;
  let failAsks = 0;

  const instance = async () => {
    const bot = createBot({
      apiKey: seed.apiKey,
      webhookSecret: seed.webhookSecret,
      ...connection,
      store: wrap(await stores.fresh()),
      clock: () => mock.clock.now(),
    });
    bot.onError((error) => {
      failures.push(error);
    });
    bot.command('/cancel', async (ctx) => {
      log.push('cancel');
      await ctx.reply('Nothing to cancel here.');
    });
    bot.command('/stop', async (ctx) => {
      const ended = await ctx.cancelQuestion();
      log.push(`stop:${ended}`);
      if (ended) await ctx.reply('Stopped.');
    });
    bot.question('refund', {
      choices: ['yes', 'no'],
      timeoutMs: TEN_MINUTES,
      passThrough: ['help'],
      onAnswer: async (ctx, answer, state) => {
        log.push(`answer:${answer}:${state.orderId}`);
        if (failAnswers > 0) {
          failAnswers -= 1;
          throw new Error('the refund service is down');
        }
        await ctx.reply(`${answer === 'yes' ? 'Refunded' : 'Kept'} ${state.orderId}.`);
      },
      onTimeout: async (ctx, state) => {
        log.push(`timeout:${state.orderId}`);
        await ctx.reply(`No answer, so ${state.orderId} was not refunded.`);
      },
    });
    bot.question('reason', {
      schema: z.string().trim().min(10, 'A few words, please.'),
      retries: 1,
      onAnswer: async (ctx, answer) => {
        log.push(`reason:${answer}`);
        await ctx.reply('Thanks, noted.');
      },
    });
    // Its onAnswer asks a follow-up, then may fail (failNextAnswers): the retry answers it again.
    bot.question('escalate', {
      choices: ['go'],
      onAnswer: async (ctx, answer) => {
        log.push(`escalate:${answer}`);
        await ctx.ask('reason', 'What went wrong?');
        if (failAnswers > 0) {
          failAnswers -= 1;
          throw new Error('the ticket service is down');
        }
      },
    });
    bot.hears('escalate', (ctx) => ctx.ask('escalate', 'Escalate?'));
    const askRefund = async (ctx: MessageContext) => {
      const sent = await ctx.ask('refund', 'Refund $42 to your card?', {
        state: { orderId: 'o_42' },
        quickReplies: [
          { actionId: 'yes', label: 'Yes' },
          { actionId: 'no', label: 'No' },
        ],
      });
      asked.push(sent.message_id);
      if (failAsks > 0) {
        failAsks -= 1;
        throw new Error('the handler failed after asking');
      }
    };
    bot.hears('refund', askRefund);
    bot.command('/refund', askRefund); // a command: its retry is never taken as an answer
    // A command: it reaches its handler even while another question waits.
    bot.command('/why', (ctx) => ctx.ask('reason', 'What went wrong?'));
    bot.on('message.received', async (ctx) => {
      log.push(`plain:${ctx.text}`);
      await ctx.reply(`You said: ${ctx.text}`);
    });
    return bot;
  };
  for (let i = 0; i < count; i++) bots.push(await instance());

  const settle = async () => {
    await mock.idle();
    await Promise.all(bots.map((bot) => bot.idle()));
  };
  return {
    mock,
    conversationId: seed.conversationId,
    userId: seed.user.id,
    deliveredFor,
    bots,
    world,
    log,
    asked,
    failures,
    replies,
    instance,
    settle,
    failNextAnswers(n: number) {
      failAnswers = n;
    },
    failNextAsks(n: number) {
      failAsks = n;
    },
    /** The user says `text` to instance `to`; resolves once every instance settled. */
    async say(text: string, to = world.to) {
      world.to = to;
      const { message } = mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text });
      await settle();
      return message;
    },
    /** The user says each text in turn, each to its instance. */
    async chat(lines: readonly (readonly [text: string, to: number])[]) {
      for (const [text, to] of lines) await this.say(text, to);
    },
    /** The user clicks `actionId` under message `messageId`, delivered to instance `to`. */
    async click(messageId: string, actionId: string, to = world.to) {
      world.to = to;
      mock.clickAction({
        conversation_id: seed.conversationId,
        user_id: seed.user.id,
        message_id: messageId,
        action_id: actionId,
      });
      await settle();
    },
  };
}

describe.each([
  ['the memory store', memory],
  ['Redis', onRedis],
])('questions on %s', (_name, makeStore) => {
  it('an answer by click reaches another instance, with the state, and no ordinary handler', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.say('refund', 0);
    expect(w.asked).toHaveLength(1);
    await w.click(w.asked[0] ?? '', 'yes', 1);
    expect(w.log).toEqual(['answer:yes:o_42']);
    expect(await w.replies()).toEqual(['Refund $42 to your card?', 'Refunded o_42.']);
    // Answered: its deadline passes with nothing more.
    await w.mock.clock.advance(TEN_MINUTES / 1000 + 1);
    expect(await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()))).toEqual([0, 0]);
    expect(w.log).toEqual(['answer:yes:o_42']);
  });

  it('an answer by text (a label, any case) reaches another instance', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.say('refund', 1);
    await w.say('  NO ', 0);
    expect(w.log).toEqual(['answer:no:o_42']);
    await w.say('hello');
    expect(w.log).toEqual(['answer:no:o_42', 'plain:hello']);
    expect(await w.replies()).toEqual(['Refund $42 to your card?', 'Kept o_42.', 'You said: hello']);
  });

  it('an answer reaches a new instance made after the asking one was dropped', async () => {
    const w = await questionWorld(makeStore, 1);
    await w.say('refund', 0);
    w.bots[0] = await w.instance(); // the old instance gets nothing more; a new one (new connection) takes over
    await w.click(w.asked[0] ?? '', 'no', 0);
    expect(w.log).toEqual(['answer:no:o_42']);
    expect(await w.replies()).toEqual(['Refund $42 to your card?', 'Kept o_42.']);
  });

  it('a timeout fires with no message, once, across 3 instances, and replies to the question', async () => {
    const w = await questionWorld(makeStore, 3);
    await w.say('refund', 0);
    expect(await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()))).toEqual([0, 0, 0]);
    await w.mock.clock.advance(TEN_MINUTES / 1000 + 1);
    // Each instance's own timer may get there first: whoever fires it, it fires once.
    const fired = await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()));
    expect(fired.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1);
    expect(await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()))).toEqual([0, 0, 0]);
    expect(w.log).toEqual(['timeout:o_42']);
    const history = await w.bots[0]!.client.conversations.listMessages(w.conversationId);
    const timedOut = history.messages.find((m) => m.fallback_text?.startsWith('No answer'));
    expect(timedOut?.reply_to?.message_id).toBe(w.asked[0]);
    // Timed out: a late click on its buttons is dropped, a late text goes to the routes.
    await w.click(w.asked[0] ?? '', 'yes', 2);
    await w.say('yes', 1);
    expect(w.log).toEqual(['timeout:o_42', 'plain:yes']);
    expect(await w.replies()).toEqual([
      'Refund $42 to your card?',
      'No answer, so o_42 was not refunded.',
      'You said: yes',
    ]);
  });

  it('an ask whose run stopped before its deadline was indexed still times out, after the retry of that run', async () => {
    let failures = 1;
    const w = await questionWorld(makeStore, 2, (store) => ({
      ...store,
      // The first write to the due index fails, as if the process had died between the two writes.
      enqueue: async (key, member, score, ttlMs) => {
        if (key.startsWith('questions-due:') && failures-- > 0) throw new Error('store gone');
        return store.enqueue(key, member, score, ttlMs);
      },
    }));
    const ask = await w.say('refund', 0);
    const webhookId = w.deliveredFor.get(ask.id)?.headers.get('webhook-id');
    const attempts = () => w.mock.deliveries.filter((d) => d.event_id === webhookId).map((d) => d.status);
    expect(attempts()).toEqual([500]);
    await w.mock.clock.advance(5); // the service's retry: the question's message replays, the index is written
    w.world.to = 1;
    await w.settle();
    expect(attempts()).toEqual([500, 200]);
    expect(await w.replies()).toEqual(['Refund $42 to your card?']); // asked once, replayed by the retry
    await w.mock.clock.advance(TEN_MINUTES / 1000);
    await Promise.all(w.bots.map((bot) => bot.fireDueQuestions())); // (or their own timers)
    expect(w.log).toEqual(['timeout:o_42']);
  });

  it('a late retry of a run that asked does not bring its question back over a newer one', async () => {
    const w = await questionWorld(makeStore, 2);
    w.failNextAsks(1);
    await w.chat([
      ['/refund', 0], // asks, then fails: answered 500, retried in 5 s
      ['/why', 1], // a newer question replaces it meanwhile (a command: not an answer to the first)
    ]);
    await w.mock.clock.advance(5);
    await w.settle(); // the retry replays the refund question's message, and leaves the newer question
    await w.say('the screen cracked', 0);
    await w.mock.clock.advance(TEN_MINUTES / 1000 + 1);
    expect(await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()))).toEqual([0, 0]);
    expect(w.log).toEqual(['reason:the screen cracked']);
  });

  it("the instances' own timers fire a timeout, once, with no call and no message", async () => {
    const w = await questionWorld(makeStore, 3);
    await w.say('refund', 0);
    await w.mock.clock.advance(TEN_MINUTES / 1000 + 1);
    // Each instance walks the due index every second by itself.
    await expect.poll(() => w.log, { timeout: 10_000, interval: 50 }).toEqual(['timeout:o_42']);
    await w.settle();
    expect(await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()))).toEqual([0, 0, 0]);
    expect(w.log).toEqual(['timeout:o_42']);
    expect((await w.replies()).filter((text) => text.startsWith('No answer'))).toHaveLength(1);
  });

  it('an answer and the timeout racing: one of them runs, the other does nothing', async () => {
    // The click and two instances' walks of the due index in flight at once: a second before the
    // deadline the answer wins, a second after it the timeout does (and the click is dropped).
    for (const [offset, winner] of [
      [-1, 'answer:yes:o_42'],
      [1, 'timeout:o_42'],
    ] as const) {
      const w = await questionWorld(makeStore, 3);
      await w.say('refund', 0);
      await w.mock.clock.advance(TEN_MINUTES / 1000 + offset);
      w.world.to = 0;
      w.mock.clickAction({
        conversation_id: w.conversationId,
        user_id: w.userId,
        message_id: w.asked[0] ?? '',
        action_id: 'yes',
      });
      await Promise.all([w.bots[1]!.fireDueQuestions(), w.bots[2]!.fireDueQuestions(), w.settle()]);
      await w.mock.clock.advance(2);
      await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()));
      await w.settle();
      expect(w.log).toEqual([winner]);
      expect(await w.replies()).toHaveLength(2);
    }
  });

  it('a double click is one answer; the second click reaches no handler', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.say('refund', 0);
    const id = w.asked[0] ?? '';
    w.world.to = 0;
    const conversation_id = w.conversationId;
    const user_id = w.userId;
    // Both clicks in flight at once, to two instances.
    w.mock.clickAction({ conversation_id, user_id, message_id: id, action_id: 'yes' });
    w.world.to = 1;
    w.mock.clickAction({ conversation_id, user_id, message_id: id, action_id: 'yes' });
    await w.settle();
    await w.click(id, 'no', 0); // and a third, later
    expect(w.log).toEqual(['answer:yes:o_42']);
    expect(await w.replies()).toEqual(['Refund $42 to your card?', 'Refunded o_42.']);
  });

  it('a redelivered answer runs nothing again; an answer whose handler failed runs again on its retry', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.say('refund', 0);
    w.failNextAnswers(1);
    const answer = await w.say('yes', 0);
    const delivery = w.deliveredFor.get(answer.id)!;
    const webhookId = delivery.headers.get('webhook-id');
    const attempts = () => w.mock.deliveries.filter((d) => d.event_id === webhookId).map((d) => d.status);
    expect(attempts()).toEqual([500]);
    // The service's retry, 5 s later, to the other instance: the answer's handler runs again.
    await w.mock.clock.advance(5);
    w.world.to = 1;
    await w.settle();
    expect(attempts()).toEqual([500, 200]);
    expect(w.log).toEqual(['answer:yes:o_42', 'answer:yes:o_42']);
    // The same delivery once more, to each instance (a redelivery): a duplicate, nothing runs.
    for (const bot of w.bots) {
      const response = await bot.fetch(delivery.clone());
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ duplicate: true });
    }
    await w.settle();
    expect(w.log).toEqual(['answer:yes:o_42', 'answer:yes:o_42']);
    expect(await w.replies()).toEqual(['Refund $42 to your card?', 'Refunded o_42.']);
  });

  it('an answer whose onAnswer asked a follow-up and then failed runs again on its retry; the follow-up waits', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.say('escalate', 0);
    w.failNextAnswers(1);
    await w.say('go', 0);
    // The service's retry, to the other instance: onAnswer runs again, its follow-up replayed.
    await w.mock.clock.advance(5);
    w.world.to = 1;
    await w.settle();
    expect(w.log).toEqual(['escalate:go', 'escalate:go']);
    await w.say('the parcel came broken', 1);
    expect(w.log).toEqual(['escalate:go', 'escalate:go', 'reason:the parcel came broken']);
    expect(await w.replies()).toEqual(['Escalate?', 'What went wrong?', 'Thanks, noted.']);
  });

  it('an invalid answer is re-asked with its buttons; past the retries the message goes to the routes', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.chat([
      ['refund', 0],
      ['maybe', 1],
      ['perhaps', 0],
    ]);
    expect(w.log).toEqual([]);
    await w.say('yes', 1);
    expect(w.log).toEqual(['answer:yes:o_42']);
    const texts = await w.replies();
    expect(texts).toEqual([
      'Refund $42 to your card?',
      'Please answer yes or no.\nRefund $42 to your card?',
      'Please answer yes or no.\nRefund $42 to your card?',
      'Refunded o_42.',
    ]);
    // A free-text question with a schema: its message; one retry, then the routes.
    await w.chat([
      ['/why', 0],
      ['bad', 1],
      ['nope', 0],
      ['it broke on day one', 1],
    ]);
    expect(w.log).toEqual(['answer:yes:o_42', 'plain:nope', 'plain:it broke on day one']);
    expect((await w.replies()).slice(4)).toEqual([
      'What went wrong?',
      'A few words, please.\nWhat went wrong?',
      'You said: nope',
      'You said: it broke on day one',
    ]);
    await w.say('/why', 0);
    await w.say('the screen cracked', 1);
    expect(w.log.at(-1)).toBe('reason:the screen cracked');
  });

  it('ctx.cancelQuestion ends the pending question: no answer, no timeout, its buttons dropped', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.chat([
      ['refund', 0],
      ['/stop', 1],
      ['/stop', 0],
    ]);
    await w.click(w.asked[0] ?? '', 'yes', 1);
    await w.mock.clock.advance(TEN_MINUTES / 1000 + 1);
    expect(await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()))).toEqual([0, 0]);
    await w.say('yes', 0);
    expect(w.log).toEqual(['stop:true', 'stop:false', 'plain:yes']);
  });

  it('a re-asked question takes a click on the re-ask', async () => {
    const w = await questionWorld(makeStore, 1);
    await w.say('refund');
    await w.say('maybe');
    const history = await w.bots[0]!.client.conversations.listMessages(w.conversationId);
    const reask = history.messages.find((m) => m.fallback_text?.startsWith('Please answer'));
    expect(reask?.parts?.map((p) => p.type)).toEqual(['text', 'actions']);
    await w.click(reask?.id ?? '', 'no');
    expect(w.log).toEqual(['answer:no:o_42']);
  });

  it('/cancel and the texts a question lets through reach their routes while it waits; then it takes its answer', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.chat([
      ['refund', 0],
      ['/cancel', 1],
      ['Help', 0],
      ['yes', 1],
    ]);
    expect(w.log).toEqual(['cancel', 'plain:Help', 'answer:yes:o_42']);
    expect((await w.replies()).slice(1)).toEqual([
      'Nothing to cancel here.',
      'You said: Help',
      'Refunded o_42.',
    ]);
  });

  it('says on the wire which question a message asks, and which one its run ended and how (metadata)', async () => {
    const w = await questionWorld(makeStore, 2);
    await w.say('refund', 0);
    await w.say('maybe', 1);
    await w.click(w.asked[0] ?? '', 'yes', 0);
    await w.chat([
      ['/why', 1],
      ['bad', 0],
      ['nope', 1],
      ['refund', 0],
    ]);
    await w.mock.clock.advance(TEN_MINUTES / 1000 + 1);
    await Promise.all(w.bots.map((bot) => bot.fireDueQuestions()));
    await w.chat([
      ['/why', 1],
      ['/stop', 0],
      ['hello', 1],
    ]);
    // What the agent sent, as the mock's feed and snapshot show it to the emulator.
    const messages = (w.mock.snapshot().conversations[0]?.messages ?? []).filter(
      (m) => m.sender.id !== w.userId,
    );
    const [first, third] = w.asked;
    const why = messages[3]?.id;
    const stopped = messages[8]?.id;
    expect(messages.map((m) => [m.fallback_text, m.metadata])).toEqual([
      ['Refund $42 to your card?', { question: { name: 'refund', timeout_ms: TEN_MINUTES } }],
      ['Please answer yes or no.\nRefund $42 to your card?', { question: { id: first, name: 'refund' } }],
      ['Refunded o_42.', { question_end: { id: first, outcome: 'answered' } }],
      ['What went wrong?', { question: { name: 'reason' } }],
      ['A few words, please.\nWhat went wrong?', { question: { id: why, name: 'reason' } }],
      ['You said: nope', { question_end: { id: why, outcome: 'gave_up' } }],
      ['Refund $42 to your card?', { question: { name: 'refund', timeout_ms: TEN_MINUTES } }],
      ['No answer, so o_42 was not refunded.', { question_end: { id: third, outcome: 'timed_out' } }],
      ['What went wrong?', { question: { name: 'reason' } }],
      ['Stopped.', { question_end: { id: stopped, outcome: 'cancelled' } }],
      ['You said: hello', null],
    ]);
  });
});

describe('declaring and asking questions', () => {
  it('refuses a bad declaration when it is made, naming each field', () => {
    const bot = createBot({
      apiKey: 'ak_test',
      webhookSecret: `whsec_${btoa('k'.repeat(32))}`,
      baseUrl: 'http://ams.test',
    });
    const issues = (definition: unknown, name: unknown = 'q') => {
      try {
        bot.question(name as string, definition as never);
        return [];
      } catch (error) {
        return (error as { issues: { field: string }[] }).issues.map((issue) => issue.field);
      }
    };
    expect(issues({ onAnswer: () => undefined })).toEqual([]);
    expect(issues({ onAnswer: () => undefined })).toEqual(['name']); // 'q' is taken now
    expect(issues({ onAnswer: () => undefined }, '')).toEqual(['name']);
    expect(
      issues(
        {
          onAnswer: 'no',
          onTimeout: 1,
          timeoutMs: 0,
          retries: -1,
          choices: [],
          schema: {},
          reask: '',
          passThrough: [/x/g],
        },
        'bad',
      ),
    ).toEqual([
      'onAnswer',
      'onTimeout',
      'timeoutMs',
      'retries',
      'choices',
      'schema',
      'reask',
      'passThrough',
      'schema', // choices and a schema together: checked across fields, after each field
    ]);
  });

  it('ctx.ask of an undeclared name is a ValidationError naming name; with none pending, cancelQuestion answers false', async () => {
    let bot: Bot | undefined;
    const { mock, seed, connection } = await routedWorld((request) => bot!.fetch(request));
    bot = createBot({ apiKey: seed.apiKey, webhookSecret: seed.webhookSecret, ...connection });
    const seen: unknown[] = [];
    bot.on('message.received', async (ctx) => {
      seen.push(await ctx.ask('nope', 'Really?').catch((error: { issues: unknown }) => error.issues));
      seen.push(await ctx.cancelQuestion());
    });
    mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'hi' });
    await mock.idle();
    await bot.idle();
    expect(seen).toEqual([
      [{ field: 'name', message: "no question named 'nope': declare it with bot.question" }],
      false,
    ]);
  });
});
