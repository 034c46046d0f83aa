// Issue 11, outcome 3: the writer's lease on its key. A writer that loses it (a stall outlived
// `writerLeaseMs`, and another writer took the key) stops with ConflictError `reply_lease_lost` and
// writes nothing more: its message is the new holder's, which ends it marked. A writer that keeps
// going renews its lease, so it is never lost by a writer that is alive. The store's clock is
// injected: the lease expires when the test says, and the tests wait for renewals, never for time.
import {
  type BotStore,
  ConflictError,
  createMemoryStore,
  type ReplyTransport,
  StoreUnavailableError,
  ValidationError,
} from 'agent-messaging';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentMessages, requestsSince, startWorld, textOf, type World } from './harness.js';

const NOTE = ' … [interrupted]';
// Short, so a renewal (every third of it) comes within a few milliseconds of real time.
const LEASE_MS = 60;

/** `inner` wrapped so that `nextRenewal()` answers the first lock renewal begun after it was called. */
function watchedLedger(inner: BotStore) {
  const waiting: ((kept: boolean) => void)[] = [];
  const ledger: BotStore = {
    ...inner,
    renewLock: async (lease, ttlMs) => {
      const waiters = waiting.splice(0);
      const kept = await inner.renewLock(lease, ttlMs);
      for (const resolve of waiters) resolve(kept);
      return kept;
    },
  };
  return { ledger, nextRenewal: () => new Promise<boolean>((resolve) => waiting.push(resolve)) };
}

/** Lets the renewal's own continuation (the writer hearing of a lost lease) run first. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe.each<ReplyTransport>(['append', 'stream'])('a reply writer’s lease (%s)', (transport) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  const lastText = async () => textOf((await agentMessages(world)).at(-1)!);

  it('checks its lease before writing after a stall, and writes nothing once another writer took it', async () => {
    // The store runs on the process's clock, which the stall moves (only Date is faked: the writer's
    // renewal timer has not run when it writes again, as in a process that was paused).
    const store = createMemoryStore({ now: () => Date.now() });
    const eventId = `evt_lease_stall_${transport}`;
    const options = {
      eventId,
      transport,
      writerLeaseMs: 5_000,
      coalesce: { ms: 1 },
      ledger: store,
    };
    const first = await world.client.messages.startReply(world.conversationId, {}, options);
    await first.write('Half an answ');
    await expect.poll(lastText).toBe('Half an answ');

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60_000);
    const second = await world.client.messages.startReply(world.conversationId, {}, options);
    expect(second.messageId).not.toBe(first.messageId);

    const before = world.mock.requests.length;
    await first.write('er, and more').catch(() => {});
    const lost = await first.complete().catch((thrown: unknown) => thrown);
    expect(ConflictError.is(lost) && lost.code).toBe('reply_lease_lost');
    const laterToFirst = requestsSince(world, before).filter((entry) => entry.path.includes(first.messageId));
    expect(laterToFirst).toEqual([]);
    await second.write('A whole answer.');
    expect(await second.complete()).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const [cut, whole] = (await agentMessages(world)).slice(-2);
    expect([cut!.id, cut!.status, textOf(cut!)]).toEqual([first.messageId, 'sent', `Half an answ${NOTE}`]);
    expect([whole!.id, textOf(whole!)]).toEqual([second.messageId, 'A whole answer.']);
  });

  it('keeps its lease through a renewal that fails with most of the TTL left', async () => {
    const inner = createMemoryStore();
    let renewals = 0;
    const ledger: BotStore = {
      ...inner,
      renewLock: async (lease, ttlMs) => {
        renewals += 1;
        // The store hiccups once (a restart, a pause): the lease itself is still held.
        if (renewals === 1) throw new StoreUnavailableError('renewLock', 'the store did not answer');
        return inner.renewLock(lease, ttlMs);
      },
    };
    const eventId = `evt_lease_hiccup_${transport}`;
    // Renewed every second; the retry after the failed one comes well within the 3 s TTL.
    const writer = await world.client.messages.startReply(
      world.conversationId,
      {},
      { eventId, transport, writerLeaseMs: 3_000, ledger, coalesce: { ms: 1 } },
    );
    await writer.write('Through a hiccup');
    await expect.poll(() => renewals, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await writer.write(', and on.');
    expect(await writer.complete()).toMatchObject({ outcome: 'complete', text: 'Through a hiccup, and on.' });
  });

  it('once lost to another writer, fails with reply_lease_lost and writes nothing more', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const watched = watchedLedger(store);
    const eventId = `evt_lease_lost_${transport}`;
    const options = { eventId, transport, writerLeaseMs: LEASE_MS, coalesce: { ms: 1 } };
    const first = await world.client.messages.startReply(
      world.conversationId,
      {},
      { ...options, ledger: watched.ledger },
    );
    await first.write('Half an answ');
    await expect.poll(lastText).toBe('Half an answ');
    expect(await watched.nextRenewal()).toBe(true);

    // The first writer stalls past its lease; another writer of the key takes it and the message.
    now += LEASE_MS + 1;
    const renewal = watched.nextRenewal();
    const second = await world.client.messages.startReply(
      world.conversationId,
      {},
      { ...options, ledger: store },
    );
    expect(second.messageId).not.toBe(first.messageId);
    expect(await renewal).toBe(false);
    await settle();

    const before = world.mock.requests.length;
    const lost = await first.write('er, and more').catch((thrown: unknown) => thrown);
    expect(ConflictError.is(lost) && [lost.code, lost.status]).toEqual(['reply_lease_lost', 409]);
    expect(await first.complete().catch((thrown: unknown) => thrown)).toBe(lost);
    expect(await first.interrupt().catch((thrown: unknown) => thrown)).toBe(lost);
    // Nothing went over the wire from the first writer once its lease was lost.
    expect(requestsSince(world, before)).toEqual([]);

    await second.write('A whole answer.');
    expect(await second.complete()).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const [cut, whole] = (await agentMessages(world)).slice(-2);
    // One writer per message: the first's text, ended marked by the second, then the second's own.
    expect([cut!.id, cut!.status, textOf(cut!)]).toEqual([first.messageId, 'sent', `Half an answ${NOTE}`]);
    expect([whole!.id, whole!.status, textOf(whole!)]).toEqual([second.messageId, 'sent', 'A whole answer.']);
    const laterToFirst = requestsSince(world, before).filter((entry) => entry.path.includes(first.messageId));
    expect(laterToFirst).toEqual([]);
  });

  it('is renewed while the writer works, so a long reply keeps it and completes', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const watched = watchedLedger(store);
    const eventId = `evt_lease_kept_${transport}`;
    const writer = await world.client.messages.startReply(
      world.conversationId,
      {},
      { eventId, transport, writerLeaseMs: LEASE_MS, ledger: watched.ledger, coalesce: { ms: 1 } },
    );
    const parts = Array.from({ length: 6 }, (_, i) => `part ${i} `);
    for (const part of parts) {
      await writer.write(part);
      // Less than a lease between renewals, 3.6 leases in all: only renewing keeps it.
      now += LEASE_MS * 0.6;
      expect(await watched.nextRenewal()).toBe(true);
    }
    const refused = await world.client.messages
      .reply(world.conversationId, ['Another answer'], {
        eventId,
        transport,
        ledger: store,
        writerWaitMs: 0,
      })
      .catch((thrown: unknown) => thrown);
    expect(ConflictError.is(refused) && refused.code).toBe('reply_in_progress');
    const result = await writer.complete();
    expect(result).toMatchObject({ outcome: 'complete', status: 'sent', text: parts.join('') });
    const message = (await agentMessages(world)).at(-1)!;
    expect([message.id, textOf(message)]).toEqual([writer.messageId, parts.join('')]);
  });

  it.each([0, -1, 1.5, '30s'])('refuses writerLeaseMs %j before sending anything', async (value) => {
    const before = world.mock.requests.length;
    const error = await world.client.messages
      .startReply(world.conversationId, {}, { transport, writerLeaseMs: value as number })
      .catch((thrown: unknown) => thrown);
    expect(ValidationError.is(error) && error.issues.map((issue) => issue.field)).toEqual(['writerLeaseMs']);
    expect(requestsSince(world, before)).toEqual([]);
  });
});
