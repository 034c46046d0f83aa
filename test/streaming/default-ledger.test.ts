// The ledger a reply uses when it is given none (a memory store of this process's): one writer per
// key, and a writer stalled past writerLeaseMs loses the key to the next one, as a shared store
// does. The stall is the clock moved past the lease (only Date is faked: the writer's renewal timer
// has not run yet). The other cases of the default ledger are in pipe-reply and reply-outcomes tests.
import { ConflictError, ReplyMismatchError } from 'agent-messaging';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentMessages, startWorld, textOf, type World } from './harness.js';

describe('the default reply ledger', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld('loopback');
  });
  afterAll(() => world?.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives a stalled writer’s key to the next writer, which ends its message marked and writes anew', async () => {
    const eventId = 'evt_default_ledger_stall';
    const options = { eventId, writerLeaseMs: 5_000, coalesce: { ms: 1 } };
    const first = await world.client.messages.startReply(world.conversationId, {}, options);
    await first.write('Half an answer');
    // Held: a second writer of the key is refused while the lease runs.
    const refused = await world.client.messages
      .startReply(world.conversationId, {}, { ...options, writerWaitMs: 20 })
      .catch((error: unknown) => error);
    expect(ConflictError.is(refused) && refused.code).toBe('reply_in_progress');

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60_000);
    const second = await world.client.messages.startReply(world.conversationId, {}, options);
    expect(second.messageId).not.toBe(first.messageId);
    await second.write('The whole answer');
    await expect(second.complete()).resolves.toMatchObject({ outcome: 'complete', text: 'The whole answer' });
    const failure = await first.complete().catch((error: unknown) => error);
    // The first writer is not told it lost the key until its renewal runs: its completion finds the
    // message ended by the other and fails (never a success the service does not hold).
    const lost = ConflictError.is(failure) && failure.code === 'reply_lease_lost';
    expect(lost || ReplyMismatchError.is(failure)).toBe(true);

    const messages = await agentMessages(world);
    const cut = messages.find((message) => message.id === first.messageId);
    expect(cut?.status).toBe('sent');
    expect(textOf(cut!)).toBe('Half an answer … [interrupted]');
    expect(textOf(messages.find((message) => message.id === second.messageId)!)).toBe('The whole answer');
  });
});
