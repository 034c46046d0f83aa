// A message a dead writer left streaming is ended marked once, however many runs end it: the run
// that ends it may itself die (or fail) between appending the interrupted note and completing the
// message, and the next run then finds the message still streaming, its text already marked. It
// completes it without a second note (the cluster soak once showed "… [interrupted] … [interrupted]"
// under kills). Review of the reply lease's recovery (reply-start.ts endDeadReply).
import { AgentClient, ConflictError, createMemoryStore, type ReplyTransport } from 'agent-messaging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, startWorld, textOf, type World } from './harness.js';

const NOTE = ' … [interrupted]';
const LEASE_MS = 60;

describe.each<ReplyTransport>(['append', 'stream'])('a dead writer’s message (%s)', (transport) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());

  it('is marked once when the run that ends it fails between the note and the completion', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const eventId = `evt_dead_twice_${transport}`;
    const options = { eventId, transport, writerLeaseMs: LEASE_MS, coalesce: { ms: 1 }, ledger: store };

    // The first writer writes part of its answer and dies: its lease is left to expire.
    const dead = await world.client.messages.startReply(world.conversationId, {}, options);
    await dead.write('Half an answ');
    await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answ');
    now += LEASE_MS + 1;

    // The next run appends the note to the dead message, then cannot complete it (it dies there).
    const failing = new AgentClient({
      apiKey: world.apiKey,
      baseUrl: world.baseUrl,
      fetch: async (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (url.includes(dead.messageId) && url.endsWith('/complete')) throw new TypeError('fetch failed');
        return fetch(input, init);
      },
    });
    const cut = await failing.messages
      .reply(world.conversationId, ['Never sent'], options)
      .catch((error: unknown) => error);
    expect(cut).toBeInstanceOf(Error);
    const marked = (await agentMessages(world)).find((message) => message.id === dead.messageId)!;
    expect([marked.status, textOf(marked)]).toEqual(['streaming', `Half an answ${NOTE}`]);
    now += LEASE_MS + 1;

    // A third run ends it: completed, the note still once, and its own answer in a new message.
    const result = await world.client.messages.reply(world.conversationId, ['A whole answer.'], options);
    expect(result).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const mine = await agentMessages(world);
    const ended = mine.find((message) => message.id === dead.messageId)!;
    expect([ended.status, textOf(ended)]).toEqual(['sent', `Half an answ${NOTE}`]);
    expect(mine.filter((message) => textOf(message) === 'A whole answer.').map((m) => m.id)).toEqual([
      result.message_id,
    ]);
    expect(mine.some((message) => textOf(message)?.includes('Never sent'))).toBe(false);
  });

  it('is not replayed as the answer when its ender marked and completed it but died before giving it up', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const eventId = `evt_dead_replayed_${transport}`;
    const options = { eventId, transport, writerLeaseMs: LEASE_MS, coalesce: { ms: 1 }, ledger: store };
    const dead = await world.client.messages.startReply(world.conversationId, {}, options);
    await dead.write('Half an answ');
    await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answ');
    now += LEASE_MS + 1;

    // The next run ends the dead message marked, then its store fails as it gives the attempt up.
    const failingLedger = {
      ...store,
      increment: async () => {
        throw new Error('store unreachable');
      },
    };
    const cut = await world.client.messages
      .reply(world.conversationId, ['Never sent'], { ...options, ledger: failingLedger })
      .catch((error: unknown) => error);
    expect(cut).toBeInstanceOf(Error);
    const marked = (await agentMessages(world)).find((message) => message.id === dead.messageId)!;
    expect([marked.status, textOf(marked)]).toEqual(['sent', `Half an answ${NOTE}`]);
    now += LEASE_MS + 1;

    // A third run writes its answer as a new message, instead of answering with the cut text.
    const result = await world.client.messages.reply(world.conversationId, ['A whole answer.'], options);
    expect(result).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    expect(result.message_id).not.toBe(dead.messageId);
    const mine = await agentMessages(world);
    expect(textOf(mine.find((message) => message.id === dead.messageId)!)).toBe(`Half an answ${NOTE}`);
    expect(textOf(mine.find((message) => message.id === result.message_id)!)).toBe('A whole answer.');
  });

  it('is not marked by a run whose lease passed while it read the message (the next run marks it)', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const eventId = `evt_dead_stale_${transport}`;
    const options = { eventId, transport, writerLeaseMs: LEASE_MS, coalesce: { ms: 1 }, ledger: store };
    const dead = await world.client.messages.startReply(world.conversationId, {}, options);
    await dead.write('Half an answ');
    await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answ');
    now += LEASE_MS + 1;

    // The third run appends the note, then waits (before completing) until the stalled run went on.
    let appended!: () => void;
    const thirdAppended = new Promise<void>((resolve) => {
      appended = resolve;
    });
    let goOn!: () => void;
    const stalledWentOn = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    const urlOf = (input: string | URL | Request) => (input instanceof Request ? input.url : String(input));
    const third = new AgentClient({
      apiKey: world.apiKey,
      baseUrl: world.baseUrl,
      fetch: async (input, init) => {
        if (urlOf(input).includes(dead.messageId) && urlOf(input).endsWith('/complete')) {
          appended();
          await stalledWentOn;
        }
        return fetch(input, init);
      },
    });
    let thirdRun: Promise<unknown> | undefined;
    // The second run stalls while it reads the dead message back: its lease passes, the third takes it.
    const stalled = new AgentClient({
      apiKey: world.apiKey,
      baseUrl: world.baseUrl,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        const method = input instanceof Request ? input.method : (init?.method ?? 'GET');
        if (method === 'GET' && thirdRun === undefined) {
          now += LEASE_MS + 1;
          thirdRun = third.messages.reply(world.conversationId, ['A whole answer.'], options);
          await thirdAppended;
        }
        return response;
      },
    });
    const second = await stalled.messages
      .reply(world.conversationId, ['Never sent'], options)
      .catch((error: unknown) => error);
    goOn();
    const result = await thirdRun;
    expect(result).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const mine = await agentMessages(world);
    const ended = mine.find((message) => message.id === dead.messageId)!;
    expect([ended.status, textOf(ended)]).toEqual(['sent', `Half an answ${NOTE}`]);
    expect(mine.some((message) => textOf(message)?.includes('Never sent'))).toBe(false);
    expect(ConflictError.is(second) && second.code).toBe('reply_lease_lost');
  });

  it('is not marked by its own writer once that writer lost the lease to the run ending it', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const eventId = `evt_dead_own_${transport}`;
    // A lease far longer than the test: the writer's renewal timer never runs, only the store's clock
    // takes the lease (a writer stalled past it, that has not heard yet).
    const options = { eventId, transport, writerLeaseMs: 600_000, coalesce: { ms: 1 }, ledger: store };
    const stalled = await world.client.messages.startReply(world.conversationId, {}, options);
    await stalled.write('Half an answ');
    await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answ');
    now += 600_001;

    // The next run ends the message; as it completes it, the stalled writer wakes and is interrupted.
    let interrupted: Promise<unknown> | undefined;
    const next = new AgentClient({
      apiKey: world.apiKey,
      baseUrl: world.baseUrl,
      fetch: async (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (interrupted === undefined && url.includes(stalled.messageId) && url.endsWith('/complete')) {
          interrupted = stalled.interrupt().catch((error: unknown) => error);
          await interrupted;
        }
        return fetch(input, init);
      },
    });
    const result = await next.messages.reply(world.conversationId, ['A whole answer.'], options);
    const lost = await interrupted;
    expect(result).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const ended = (await agentMessages(world)).find((message) => message.id === stalled.messageId)!;
    expect([ended.status, textOf(ended)]).toEqual(['sent', `Half an answ${NOTE}`]);
    expect(ConflictError.is(lost) && lost.code).toBe('reply_lease_lost');
  });
});

describe('a reply cut while the service is unreachable', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());

  it('is ended marked by the next run, not left streaming unmarked beside the new answer', async () => {
    const eventId = 'evt_cut_unreachable';
    const options = {
      eventId,
      transport: 'append' as const,
      coalesce: { ms: 1 },
      ledger: createMemoryStore(),
    };
    let down: string | undefined;
    const flaky = new AgentClient({
      apiKey: world.apiKey,
      baseUrl: world.baseUrl,
      maxRetries: 0,
      fetch: async (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (down !== undefined && url.includes(down)) throw new TypeError('fetch failed');
        return fetch(input, init);
      },
    });
    // The model dies after half an answer, and the service is unreachable for the cut's note.
    async function* dying() {
      yield 'Half an answ';
      await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answ');
      down = (await agentMessages(world)).at(-1)!.id;
      throw new Error('the model died');
    }
    const cut = await flaky.messages.reply(world.conversationId, dying(), options).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(Error);
    const left = (await agentMessages(world)).find((message) => message.id === down)!;
    expect([left.status, textOf(left)]).toEqual(['streaming', 'Half an answ']);

    // The service is back; the delivery's retry answers anew and ends the cut message marked.
    const result = await world.client.messages.reply(world.conversationId, ['A whole answer.'], options);
    expect(result).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const mine = await agentMessages(world);
    const ended = mine.find((message) => message.id === down)!;
    expect([ended.status, textOf(ended)]).toEqual(['sent', `Half an answ${NOTE}`]);
    expect(textOf(mine.find((message) => message.id === result.message_id)!)).toBe('A whole answer.');
  });
});
