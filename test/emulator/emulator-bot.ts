// The bot the end-to-end test chats with: a real createBot behind node:http on its own port,
// registered on the mock and verified like any bot. Its streamed reply waits on gates the test
// opens, so the test sees the reply grow without timing anything.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AgentClient,
  createBot,
  idempotencyKeyFor,
  type MessageContext,
  registerAgent,
} from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';

/** A promise the test resolves when it is ready for the bot to go on. */
export class Gate {
  readonly #opened: Promise<void>;
  #open!: () => void;

  constructor() {
    this.#opened = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  /** Lets the waiting bot go on. */
  open(): void {
    this.#open();
  }

  /** Resolves once opened. */
  wait(): Promise<void> {
    return this.#opened;
  }
}

/** What the bot does and what the test controls. */
export interface EmulatorBot {
  agentId: string;
  /** Where the bot takes its webhook deliveries. */
  webhookUrl: string;
  /** Opened by the test: the bot stops typing and starts streaming. */
  startStreaming: Gate;
  /** Opened by the test: the bot writes the rest of its reply and completes it. */
  finishStreaming: Gate;
  /** Every text the bot received, in order. */
  received: string[];
  /** The quick-reply clicks its `bot.action('yes')` route took (`ctx.action`), in order. */
  postbacks: NonNullable<MessageContext['action']>[];
  /** Every event type the bot received. */
  events: string[];
  /** Errors its handlers threw. */
  errors: string[];
  /** The users the bot invites to a group when told "group". */
  groupUsers: string[];
  close(): Promise<void>;
}

/** The text of the file the bot sends when told "file". */
export const NOTES = 'Day 1: museum. Day 2: hike.';

/** The picture the bot sends when told "photo": a 1x1 PNG, under a name that is not ASCII. */
export const PHOTO = {
  name: 'été 日本.png',
  bytes: Uint8Array.from(
    atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='),
    (char) => char.charCodeAt(0),
  ),
};

/** What the user says to get a delivered receipt and no read one. */
export const DELIVERED_ONLY = 'delivered, not read';

/** The quick replies offered after each streamed answer. */
export const QUICK_REPLIES = [
  { actionId: 'yes', label: 'Yes, thanks', behavior: { type: 'postback' as const, value: 'pick:yes' } },
  { actionId: 'more', label: 'Tell me more', behavior: { type: 'postback' as const, value: 'pick:more' } },
];

/** Registers the agent "Helper" on the mock at `baseUrl`, starts its bot, and verifies its webhook. */
export async function startEmulatorBot(baseUrl: string): Promise<EmulatorBot> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const webhookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  const { agent, api_key, webhook_secret } = await registerAgent(
    { handle: 'helper', display_name: 'Helper', webhook_url: webhookUrl, capabilities: ['text', 'buttons'] },
    { baseUrl },
  );
  const state: EmulatorBot = {
    agentId: agent.id,
    webhookUrl,
    startStreaming: new Gate(),
    finishStreaming: new Gate(),
    received: [],
    postbacks: [],
    events: [],
    errors: [],
    groupUsers: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  let flakyFailed = false;
  const bot = createBot({ apiKey: api_key, webhookSecret: webhook_secret, baseUrl });
  // The planned failure is recorded, not logged: the test reads it from here.
  bot.onError((error) => {
    state.errors.push(error instanceof Error ? error.message : String(error));
  });
  bot.on('invite.completed', () => {
    state.events.push('invite.completed');
  });
  // A click on "Yes, thanks" (PROTOCOL.md section 14) takes this route, not message.received.
  bot.action('yes', async (ctx) => {
    if (ctx.action) state.postbacks.push(ctx.action);
    state.received.push(ctx.text);
    await ctx.markRead();
    await ctx.react('👍');
    await ctx.reply('Glad it helped!');
  });
  bot.on('message.received', async (ctx) => {
    state.events.push('message.received');
    state.received.push(ctx.text);
    if (ctx.text === DELIVERED_ONLY) {
      await ctx.client.conversations.sendReceipt(ctx.conversationId, {
        message_id: ctx.message.id,
        type: 'delivered',
      });
      return;
    }
    await ctx.markRead();
    if (ctx.text === 'group') {
      await ctx.client.groups.invite(
        { title: 'Trip planning', user_ids: state.groupUsers, reason: 'Plan the trip together' },
        { idempotencyKey: idempotencyKeyFor(ctx.webhookId, 'invite') },
      );
    } else if (ctx.text === 'file') {
      const file = await ctx.client.attachments.upload(new TextEncoder().encode(NOTES), {
        name: 'notes.txt',
        mime_type: 'text/plain',
      });
      await ctx.client.messages.send(ctx.conversationId, {
        content: [
          { type: 'text', text: 'Here are the notes.' },
          { type: 'file', attachmentId: file.attachment_id },
        ],
      });
    } else if (ctx.text === 'photo') {
      const file = await ctx.client.attachments.upload(PHOTO.bytes, {
        name: PHOTO.name,
        mime_type: 'image/png',
      });
      await ctx.client.messages.send(ctx.conversationId, {
        content: [
          { type: 'text', text: 'A picture.' },
          { type: 'image', attachmentId: file.attachment_id },
        ],
      });
    } else if (ctx.text === 'oops') {
      const sent = await ctx.reply('Sent by mistake');
      await ctx.client.messages.unsend(sent.message_id);
    } else if (ctx.text === 'flaky' && !flakyFailed) {
      flakyFailed = true;
      // A handler that throws makes the bot answer 5xx, so the service retries the delivery.
      throw new Error('the first try fails on purpose');
    } else if (ctx.text === 'flaky') {
      await ctx.reply('Back on my feet after a retry.');
    } else {
      const stopTyping = await ctx.typing();
      await state.startStreaming.wait();
      await stopTyping();
      await ctx.reply(streamedAnswer(ctx.text, state.finishStreaming));
      await ctx.client.messages.send(ctx.conversationId, {
        content: [
          { type: 'text', text: 'Did that help?' },
          { type: 'actions', layout: 'quick_replies', actions: QUICK_REPLIES },
        ],
        fallbackText: 'Did that help? Reply yes or more.',
      });
    }
  });
  server.on('request', toNodeHandler(bot));
  await new AgentClient({ apiKey: api_key, baseUrl }).agents.setWebhook(agent.id, {
    webhook_url: webhookUrl,
  });
  return state;
}

async function* streamedAnswer(text: string, rest: Gate): AsyncGenerator<string> {
  yield `Echo: ${text}`;
  await rest.wait();
  for (const word of [',', ' streamed', ' word', ' by', ' word.']) yield word;
}
