// A bot wired to the mock service in process: the bot's client calls the mock through `mock.fetch`,
// and the mock's webhook deliveries go to `bot.fetch`, or into a list the test replays by hand.

import {
  type BotOptions,
  type BotStore,
  createBot,
  createMemoryStore,
  StoreUnavailableError,
} from 'agent-messaging';
import { createMockService, signWebhook } from 'agent-messaging/testing';
import { expect, vi } from 'vitest';

/** A delivery as the mock sent it: the exact bytes and headers. */
export interface RecordedDelivery {
  body: string;
  headers: Headers;
}

/** The request the mock would send for a body signed with `secret`. */
export async function signedRequest(
  body: string,
  secret: string,
  options: { id?: string; timestamp?: number; headers?: Record<string, string> } = {},
): Promise<Request> {
  const id = options.id ?? (JSON.parse(body) as { eventId: string }).eventId;
  const signed = await signWebhook({
    id,
    payload: body,
    secret,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
  return new Request('http://bot.test/webhook', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signed, ...options.headers },
    body,
  });
}

/** Replays a recorded delivery, byte for byte, to a fetch handler. */
export function replay(delivery: RecordedDelivery): Request {
  return new Request('http://bot.test/webhook', {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
}

/**
 * Registers an agent on a fresh mock, verifies its webhook through the bot, and creates a user with
 * the agent installed. Deliveries reach the bot until `record()` is called.
 */
export async function createLoop(options: Partial<BotOptions> = {}) {
  const recorded: RecordedDelivery[] = [];
  let recording = false;
  let deliver: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 });
  const mock = createMockService({
    fetch: async (request) => {
      if (!recording) return deliver(request);
      recorded.push({ body: await request.text(), headers: new Headers(request.headers) });
      return new Response(null, { status: 204 });
    },
  });
  // The Request alone: mock.fetch rebuilds a Request from the URL when given an init (reported to the lead).
  const fetch = mock.fetch;
  const connection = { baseUrl: mock.baseUrl, fetch };
  const webhook_url = 'http://bot.test/webhook';
  const seed = await mock.seed({
    handle: 'echo_bot',
    displayName: 'Echo',
    webhookUrl: webhook_url,
    capabilities: ['text'],
  });
  const bot = createBot({
    apiKey: seed.apiKey,
    webhookSecret: seed.webhookSecret,
    ...connection,
    ...options,
  });
  deliver = (request) => bot.fetch(request);
  // The seed marked the webhook verified; setting it again has the service's signed webhook.test
  // reach the bot, which every loop starts by proving.
  const verified = await bot.client.agents.setWebhook(seed.agent.id, {
    webhook_url,
    capabilities: ['text'],
  });
  expect(verified.webhook_status).toBe('verified');
  const { user, conversationId } = seed;

  return {
    mock,
    bot,
    agent: seed.agent,
    apiKey: seed.apiKey,
    secret: seed.webhookSecret,
    /** `baseUrl` and `fetch` for another client or bot of the same mock. */
    connection,
    user,
    /** The user's session token, for a UserClient. */
    sessionToken: seed.sessionToken,
    conversationId,
    recorded,
    /** From now on deliveries go to `to` (another bot, a round robin of instances) instead. */
    route(to: (request: Request) => Promise<Response>) {
      deliver = to;
    },
    /** From now on deliveries are recorded (and answered 204) instead of reaching the bot. */
    record() {
      recording = true;
    },
    /** The user posts; resolves once the mock's delivery settled. */
    async post(text: string) {
      const { message } = mock.postUserMessage(conversationId, { user_id: user.id, text });
      await mock.idle();
      return message;
    },
    /** The `/v1` requests the bot's client made, after the setup's. */
    requests(filter: { method?: string; path?: RegExp } = {}) {
      return mock.requests.filter(
        (entry) =>
          (filter.method === undefined || entry.method === filter.method) &&
          (filter.path === undefined || filter.path.test(entry.path)),
      );
    },
    /** The conversation's messages sent by the agent, oldest first. */
    async agentMessages() {
      const { messages } = await bot.client.conversations.listMessages(conversationId);
      return messages.filter((message) => message.sender.id === seed.agent.id).reverse();
    },
  };
}

/** What `createLoop` gives. */
export type Loop = Awaited<ReturnType<typeof createLoop>>;

/**
 * From now on deliveries of a message whose text is in the answered set get a 502 before they reach
 * the bot (a proxy whose upstream failed), so the service retries them; the others reach the bot.
 */
export function failDeliveries(loop: Loop): Set<string> {
  const failing = new Set<string>();
  loop.route(async (request) => {
    const body = (await request.clone().json()) as { message?: { fallback_text?: string } };
    const text = body.message?.fallback_text;
    if (text !== undefined && failing.has(text)) return new Response('bad gateway', { status: 502 });
    return loop.bot.fetch(request);
  });
  return failing;
}

/** The runtime's own history reads (docs/bot.md "Order with gaps"): their `before_sequence` and `limit`. */
export const historyReads = (loop: Loop) =>
  loop
    .requests({ method: 'GET', path: /\/conversations\/[^/]+\/messages$/ })
    .filter((entry) => entry.query.before_sequence !== undefined)
    .map((entry) => ({ before: entry.query.before_sequence, limit: entry.query.limit }));

/** Sends the mock's deliveries to `bots` in turn, the first to `bots[0]`, as a round-robin balancer would. */
export function routeInTurn(loop: Loop, bots: readonly { fetch(request: Request): Promise<Response> }[]) {
  let turn = 0;
  loop.route((request) => (bots[turn++ % bots.length] as (typeof bots)[number]).fetch(request));
}

/** A promise the test settles by hand. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Records one real message.received delivery of the mock, without letting it reach the bot. */
export async function recordMessage(loop: Loop, text = 'hello') {
  loop.record();
  await loop.post(text);
  const delivery = loop.recorded.at(-1);
  if (!delivery) throw new Error('the mock delivered nothing');
  return delivery;
}

/** A signed-able body of an event type this SDK does not know. */
export const unknownEvent = (eventId: string) =>
  JSON.stringify({
    schema: 'svc.event.v1',
    eventId,
    type: 'agent.renamed',
    createdAt: new Date().toISOString(),
    agentId: 'agt_1',
    handle: 'new_name',
  });

/** A memory store whose chosen methods fail while `failing` holds them. */
export function flakyStore() {
  const inner = createMemoryStore();
  const failing = new Set<keyof BotStore>();
  const store = new Proxy(inner, {
    get(target, name: keyof BotStore) {
      const method = target[name] as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        if (failing.has(name)) {
          // What a real store throws when its backend is unreachable (the Redis store's error).
          return Promise.reject(new StoreUnavailableError(String(name), 'store down'));
        }
        return method.apply(target, args);
      };
    },
  });
  return { store, inner, failing };
}

/**
 * Runs `test` with fake timeouts and a fake `performance` clock (the bot's timers read it), so that
 * renewals seconds apart run at once; real timers come back after it, whatever it did.
 */
export async function withFakeTimers(test: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  try {
    await test();
  } finally {
    vi.useRealTimers();
  }
}
