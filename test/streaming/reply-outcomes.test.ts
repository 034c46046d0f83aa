// Issue 11, outcomes 1 to 3, through messages.reply() and startReply() against the mock: nothing
// written, nothing shown; cut short, and visibly so; exactly once across writers.
import { ConflictError, createMemoryStore, RequestAbortedError, ValidationError } from 'agent-messaging';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, type Door, requestsSince, startWorld, textOf, type World } from './harness.js';

/** A model's text stream: `words`, failing when `failAt` of them were given. */
async function* model(words: readonly string[], failAt?: number) {
  for (const [index, word] of words.entries()) {
    if (index === failAt) throw new Error('the model failed');
    yield word;
  }
}

const NOTE = ' … [interrupted]';

describe.each<Door>(['loopback', 'msw'])('a reply from a text source (%s door)', (door) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld(door);
  });
  afterAll(() => world?.close());

  it.each([
    ['fails before its first token', model(['Hello'], 0), /the model failed/, false],
    ['gives only empty chunks', model(['', '', '']), /chunks: gave no text/, true],
    ['is empty', [], /chunks: gave no text/, true],
  ])('that %s leaves no message and throws', async (_, source, message, validation) => {
    const count = (await agentMessages(world)).length;
    const before = world.mock.requests.length;
    const error = await world.client.messages
      .reply(world.conversationId, source, { eventId: `evt_none_${door}_${String(message)}` })
      .catch((thrown: unknown) => thrown);
    expect((error as Error).message).toMatch(message);
    expect(ValidationError.is(error)).toBe(validation);
    expect(requestsSince(world, before)).toEqual([]);
    expect(await agentMessages(world)).toHaveLength(count);
  });

  it('that fails halfway ends the message marked and rethrows; the retry of the key posts a new message', async () => {
    const eventId = `evt_half_${door}`;
    const words = ['The capital ', 'of Australia ', 'is Canberra.'];
    const error = await world.client.messages
      .reply(world.conversationId, model(words, 2), { eventId })
      .catch((thrown: unknown) => thrown);
    expect((error as Error).message).toBe('the model failed');
    const retry = await world.client.messages.reply(world.conversationId, model(words), { eventId });
    expect(retry).toMatchObject({ outcome: 'complete', text: words.join('') });
    const [cut, whole] = (await agentMessages(world)).slice(-2);
    expect([cut!.status, textOf(cut!)]).toEqual(['sent', `The capital of Australia${NOTE}`]);
    expect([whole!.id, whole!.status, textOf(whole!)]).toEqual([retry.message_id, 'sent', words.join('')]);
  });

  it('whose writer fails for good still ends the message marked, and throws the failure', async () => {
    world.mock.faults.inject({
      method: 'POST',
      path: '/v1/messages/*/blocks/*/append',
      fault: 'status',
      status: 422,
      times: 1,
    });
    const error = await world.client.messages
      .reply(world.conversationId, model(['Before ', 'the failure']), { transport: 'append' })
      .catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 422 });
    const message = (await agentMessages(world)).at(-1)!;
    expect([message.status, textOf(message)]).toEqual(['sent', NOTE]);
  });

  it("with interruptedNote '' ends the cut message without a note", async () => {
    await world.client.messages
      .reply(world.conversationId, model(['Half ', 'done'], 1), { interruptedNote: '' })
      .catch(() => {});
    expect(textOf((await agentMessages(world)).at(-1)!)).toBe('Half ');
  });

  it('whose signal fires mid-reply resolves with outcome interrupted and a marked message', async () => {
    const controller = new AbortController();
    async function* slow() {
      yield 'Thinking ';
      controller.abort();
      await new Promise(() => {}); // the model hangs; the signal must end the reply anyway
    }
    const result = await world.client.messages.reply(world.conversationId, slow(), {
      signal: controller.signal,
    });
    expect(result).toMatchObject({ outcome: 'interrupted', text: `Thinking${NOTE}`, status: 'sent' });
    expect(textOf((await agentMessages(world)).at(-1)!)).toBe(`Thinking${NOTE}`);
  });

  it('whose signal fired before the first chunk sends nothing and rejects with RequestAbortedError', async () => {
    const before = world.mock.requests.length;
    const controller = new AbortController();
    controller.abort();
    const error = await world.client.messages
      .reply(world.conversationId, ['never'], { signal: controller.signal })
      .catch((thrown: unknown) => thrown);
    expect(RequestAbortedError.is(error)).toBe(true);
    expect(requestsSince(world, before)).toEqual([]);
  });
});

describe.each<Door>(['loopback', 'msw'])('two writers of one key (%s door)', (door) => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld(door);
  });
  afterAll(() => world?.close());

  it('never interleave: run at once, one writes and the other answers its reply, replayed', async () => {
    const eventId = `evt_twice_${door}`;
    const words = Array.from({ length: 40 }, (_, i) => `a${i} `);
    const other = Array.from({ length: 40 }, (_, i) => `b${i} `);
    const results = await Promise.all([
      world.client.messages.reply(world.conversationId, model(words), { eventId }),
      world.client.messages.reply(world.conversationId, model(other), { eventId }),
    ]);
    expect(results.map((result) => result.outcome).sort()).toEqual(['complete', 'replayed']);
    expect(results[0]!.message_id).toBe(results[1]!.message_id);
    const message = (await agentMessages(world)).at(-1)!;
    expect([words.join(''), other.join('')]).toContain(textOf(message));
    expect(results[0]!.text).toBe(textOf(message));
  });

  it('sharing a store across two "processes" never interleave either: the second waits, or gets a ConflictError', async () => {
    const store = createMemoryStore();
    const eventId = `evt_shared_${door}`;
    const first = await world.client.messages.startReply(
      world.conversationId,
      {},
      { eventId, ledger: store },
    );
    await first.write('From the first process');
    const refused = await world.client.messages
      .reply(world.conversationId, ['From the second'], { eventId, ledger: store, writerWaitMs: 20 })
      .catch((thrown: unknown) => thrown);
    expect(ConflictError.is(refused) && refused.code).toBe('reply_in_progress');
    const waiting = world.client.messages.reply(world.conversationId, ['From the second'], {
      eventId,
      ledger: store,
    });
    const done = await first.complete();
    expect(await waiting).toEqual({ ...done, outcome: 'replayed' });
    expect(textOf((await agentMessages(world)).at(-1)!)).toBe('From the first process');
  });

  it('after a writer died mid-reply: the retry ends its message marked and writes a new one', async () => {
    let now = Date.now();
    const store = createMemoryStore({ now: () => now });
    const eventId = `evt_dead_${door}`;
    const dead = await world.client.messages.startReply(
      world.conversationId,
      {},
      { eventId, ledger: store, coalesce: { ms: 1 } },
    );
    await dead.write('Half an answ');
    await expect.poll(async () => textOf((await agentMessages(world)).at(-1)!)).toBe('Half an answ');
    // The process died: nothing renews its lease, which expires.
    now += 60_000;
    const retry = await world.client.messages.reply(world.conversationId, ['A whole answer.'], {
      eventId,
      ledger: store,
    });
    expect(retry).toMatchObject({ outcome: 'complete', text: 'A whole answer.' });
    const [cut, whole] = (await agentMessages(world)).slice(-2);
    expect([cut!.id, cut!.status, textOf(cut!)]).toEqual([dead.messageId, 'sent', `Half an answ${NOTE}`]);
    expect([whole!.id, textOf(whole!)]).toEqual([retry.message_id, 'A whole answer.']);
  });
});
