// Issue 17, first row: the first write of a reply goes at once, then writes coalesce; the request
// counts stay at 1 per reply on `stream` and at most ceil(chars/256)+2 on `append`. No clock is
// read: "at once" is shown by order (the first token is applied before the second is written, with
// a coalescing interval no test waits for) and by the batches the wire carried.
import type { MockEvent, RequestLogEntry } from 'agent-messaging/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, pieces, requestsSince, startWorld, textOf, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld('loopback');
});
afterAll(() => world?.close());

async function* tokens(parts: readonly string[]) {
  yield* parts;
}

const parts = pieces(400);
const text = parts.join('');
// A coalescing interval no test waits for: only the first-write rule can send a lone token.
const NEVER = { chars: 256, ms: 600_000 };

/** The text of each change the mock applied to the agent's message, in order (its live feed). */
function appliedChanges(mock: World['mock']) {
  const texts: string[] = [];
  const waiters: { text: string; resolve: () => void }[] = [];
  const unsubscribe = mock.events.subscribe((event: MockEvent) => {
    if (event.type !== 'message.updated' || event.message.status !== 'streaming') return;
    const current = textOf(event.message) ?? '';
    if (current === texts.at(-1)) return;
    texts.push(current);
    for (const waiter of waiters.filter((candidate) => current.startsWith(candidate.text))) waiter.resolve();
  });
  return {
    texts,
    unsubscribe,
    /** Resolves once the message's text starts with `prefix`. */
    until: (prefix: string) =>
      texts.some((applied) => applied.startsWith(prefix))
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ text: prefix, resolve })),
  };
}

const appendsOf = (requests: RequestLogEntry[]) =>
  requests.filter((entry) => entry.path.endsWith('/append')).map((entry) => JSON.parse(entry.body!).value);

const patchLinesOf = (start: RequestLogEntry) =>
  start
    .body!.split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((line) => line.type === 'message.patch')
    .map((line) => line.patch.value as string);

describe('the first token of a reply', () => {
  it.each(['stream', 'append'] as const)(
    'on %s is applied before the second token is written, then tokens coalesce',
    async (transport) => {
      const before = world.mock.requests.length;
      const applied = appliedChanges(world.mock);
      const order: string[] = [];
      async function* model() {
        yield parts[0]!;
        // The writer holds the rest for ten minutes: only the first-write rule lets this go on.
        await applied.until(parts[0]!);
        order.push('first applied');
        if (transport === 'append') {
          // The request log says the same: the first append arrived, alone, before the second write.
          expect(appendsOf(requestsSince(world, before))).toEqual([parts[0]]);
        }
        order.push('second written');
        yield* parts.slice(1);
      }
      const result = await world.client.messages.reply(world.conversationId, model(), {
        transport,
        coalesce: NEVER,
      });
      applied.unsubscribe();
      expect(order).toEqual(['first applied', 'second written']);
      expect(applied.texts[0]).toBe(parts[0]);
      expect(result.text).toBe(text);
      const requests = requestsSince(world, before);
      if (transport === 'stream') {
        expect(requests.filter((entry) => entry.method === 'POST')).toHaveLength(1);
        expect(patchLinesOf(requests[0]!)[0]).toBe(parts[0]);
      } else {
        const appends = appendsOf(requests);
        expect(appends[0]).toBe(parts[0]);
        expect(requests.length - 1).toBeLessThanOrEqual(Math.ceil(text.length / 256) + 2);
      }
      expect(textOf((await agentMessages(world)).at(-1)!)).toBe(text);
    },
  );

  it('on append is sent alone in the first append, and the reply takes at most ceil(chars/256)+2 requests', async () => {
    const before = world.mock.requests.length;
    const result = await world.client.messages.reply(world.conversationId, tokens(parts), {
      transport: 'append',
    });
    const requests = requestsSince(world, before);
    const appends = requests.filter((entry) => entry.path.endsWith('/append'));
    const completes = requests.filter((entry) => entry.path.endsWith('/complete'));
    expect(JSON.parse(appends[0]!.body!)).toEqual({ path: '/text', value: parts[0] });
    expect(appends.length + completes.length).toBeLessThanOrEqual(Math.ceil(text.length / 256) + 2);
    expect(result.text).toBe(text);
    expect(textOf((await agentMessages(world)).at(-1)!)).toBe(text);
  });

  it('on stream is the first patch line of the one request the reply makes', async () => {
    const before = world.mock.requests.length;
    const result = await world.client.messages.reply(world.conversationId, tokens(parts), {
      transport: 'stream',
    });
    const requests = requestsSince(world, before).filter((entry) => entry.method === 'POST');
    expect(requests).toHaveLength(1);
    const lines = patchLinesOf(requests[0]!);
    expect(lines[0]).toBe(parts[0]);
    // Coalesced after it: far fewer lines than writes.
    expect(lines.length).toBeLessThanOrEqual(Math.ceil(text.length / 256) + 1);
    expect(result.text).toBe(text);
  });

  it('a reader following the message with messages.stream() sees the first token as its own patch', async () => {
    const key = `first-token-reader-${Date.now()}`;
    const reply = await world.client.messages.startReply(
      world.conversationId,
      {},
      { transport: 'stream', idempotencyKey: key, coalesce: NEVER },
    );
    // A replayed start follows the message live (PROTOCOL.md section 4).
    const reader = await world.client.messages.stream(world.conversationId, {}, { idempotencyKey: key });
    const events = reader[Symbol.asyncIterator]();
    expect((await events.next()).value?.type).toBe('message.started');
    await reply.write(parts[0]!);
    // Nothing else is written until the reader has the first token.
    const first = (await events.next()).value;
    expect(first).toMatchObject({ type: 'message.patch', patch: { value: parts[0] } });
    for (const part of parts.slice(1)) await reply.write(part);
    const result = await reply.complete();
    let seen = parts[0]!;
    for (let next = await events.next(); !next.done; next = await events.next()) {
      if (next.value.type === 'message.patch') seen += next.value.patch.value;
    }
    expect(seen).toBe(text);
    expect(result.text).toBe(text);
  });
});
