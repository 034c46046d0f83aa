// Issue 11 against a service that misbehaves on purpose (outcomes 4, 5 and 6): the reply settles,
// falls back to append, never sends a line twice, and refuses events it cannot trust.
import { AgentClient, InvalidResponseError, ReplyMismatchError, TimeoutError } from 'agent-messaging';
import { afterEach, describe, expect, it } from 'vitest';
import { CONVERSATION, type Script, startScriptedServer } from './scripted-server.js';

let server: Awaited<ReturnType<typeof startScriptedServer>> | undefined;
afterEach(() => server?.close());

async function clientOf(script: Script) {
  server = await startScriptedServer(script);
  return { client: new AgentClient({ apiKey: 'key_scripted', baseUrl: server.baseUrl }), server };
}

// 360 characters in 36 writes, each sent as its own line (coalesce 1 char).
const written = Array.from({ length: 36 }, (_, i) => `piece ${String(i).padStart(3, '0')} `);
const text = written.join('');

async function writeReply(client: AgentClient, coalesce = { chars: 1, ms: 1 }, progressTimeoutMs = 200) {
  const reply = await client.messages.startReply(
    CONVERSATION,
    {},
    { transport: 'stream', progressTimeoutMs, coalesce },
  );
  for (const piece of written) await reply.write(piece);
  return { reply, result: await reply.complete() };
}

describe('a reply on a service that keeps the stream alive but acknowledges nothing', () => {
  it('settles: past the progress deadline it falls back to append and the message holds the text once', async () => {
    const { client, server } = await clientOf({ echo: false, keepAliveMs: 20 });
    const { reply, result } = await writeReply(client);
    expect(text).toHaveLength(360);
    expect(reply.transport).toBe('append');
    expect(result).toMatchObject({ status: 'sent', text, outcome: 'complete' });
    expect(server.message).toMatchObject({ text, status: 'sent' });
    // One streamed start, a read-back, and the completion through the endpoint.
    expect(server.requests.filter((entry) => entry.contentType === 'application/x-ndjson')).toHaveLength(1);
    expect(server.requests.some((entry) => entry.method === 'GET')).toBe(true);
    expect(server.requests.filter((entry) => entry.path.endsWith('/complete'))).toHaveLength(1);
  });

  it('settles when the completion line is never acknowledged: the completion goes through the endpoint', async () => {
    const { client, server } = await clientOf({ ackCompletion: false, keepAliveMs: 20 });
    const { result } = await writeReply(client);
    expect(result).toMatchObject({ status: 'sent', text, outcome: 'complete' });
    expect(server.message).toMatchObject({ text, status: 'sent' });
    expect(server.requests.filter((entry) => entry.path.endsWith('/complete'))).toHaveLength(1);
  });
});

describe('a reply whose lines the service applies after the connection was cut', () => {
  it('waits for them instead of sending them again: 360 characters for 360 written', async () => {
    const { client, server } = await clientOf({
      applyLate: { lateMs: 50 },
      ackCompletion: false,
      keepAliveMs: 20,
    });
    // Batches of 100 characters in a window of 400: every line is in flight when the stream stalls.
    // They land 50 ms after the cut, well inside the settle period (1 s here) on a loaded machine too:
    // a stall longer than the gap between the two timers would let the settle period end first.
    const { result } = await writeReply(client, { chars: 100, ms: 1 }, 1000);
    expect(server.message.text).toHaveLength(360);
    expect(server.message).toMatchObject({ text, status: 'sent' });
    expect(result).toMatchObject({ text, revision: server.message.revision, outcome: 'complete' });
    // Nothing was appended through the endpoint: every line landed, late.
    expect(server.requests.filter((entry) => entry.path.endsWith('/append'))).toEqual([]);
  });

  it('waits while they keep landing, one by one, past one settle period: nothing is sent twice', async () => {
    const { client, server } = await clientOf({
      applyLate: { lateMs: 50, spacingMs: 500 },
      ackCompletion: false,
      keepAliveMs: 20,
    });
    // Five lines: the first token alone, then 90 characters each (no timer sends: its interval is
    // ten minutes). They land 500 ms apart once the connection is cut, the last 2,050 ms after it:
    // past one settle period (1,200 ms, the progress timeout here), each within one of the one before
    // by 700 ms, a margin a loaded machine's stalls keep.
    const reply = await client.messages.startReply(
      CONVERSATION,
      {},
      { transport: 'stream', progressTimeoutMs: 1200, coalesce: { chars: 90, ms: 600_000 } },
    );
    for (const piece of written) await reply.write(piece);
    const result = await reply.complete();
    expect(server.message).toMatchObject({ text, status: 'sent', revision: 5 });
    expect(result).toMatchObject({ text, revision: 5, outcome: 'complete' });
    expect(server.requests.filter((entry) => entry.path.endsWith('/append'))).toEqual([]);
  });
});

describe('a recovered reply whose message the service changed', () => {
  it('is verified once completed: text it never wrote is a ReplyMismatchError naming both lengths', async () => {
    const { client, server } = await clientOf({ echo: false, keepAliveMs: 20, onComplete: ' junk!' });
    const error = await writeReply(client).catch((thrown: unknown) => thrown);
    expect(ReplyMismatchError.is(error)).toBe(true);
    expect(error).toMatchObject({ expectedLength: 360, actualLength: 366 });
    expect((error as Error).message).toMatch(/holds 366 characters .* where the reply wrote 360/);
    expect(server.message.text).toBe(`${text} junk!`);
  });

  it('checks the revision each append answers: an append applied twice is a ReplyMismatchError, not a success', async () => {
    const { client } = await clientOf({ doubleAppends: true });
    const reply = await client.messages.startReply(CONVERSATION, {}, { transport: 'append' });
    const error = await (async () => {
      for (const piece of written) await reply.write(piece);
      return reply.complete();
    })().catch((thrown: unknown) => thrown);
    expect(ReplyMismatchError.is(error)).toBe(true);
    expect((error as Error).message).toMatch(/holds 20 characters .* where the reply wrote 10/);
  });
});

const raw = (type: string, seq: number, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ schema: 'svc.event.v1', eventId: `evt_raw${seq}`, conversationId: CONVERSATION, type, seq, ...data })}\n\n`;
const patch = (seq: number, value: string, messageId = 'msg_scripted') =>
  raw('message.patch', seq, {
    messageId,
    patch: { op: 'appendText', blockId: 'blk_scripted', path: '/text', value },
  });

describe('messages.stream() on a hostile service', () => {
  it.each([
    [
      'events out of seq order',
      patch(3, 'b') + patch(2, 'a'),
      /message\.patch event \(seq 3\) skips from seq 1 to 3/,
    ],
    ['a patch of another message', patch(2, 'x', 'msg_other'), /is of message msg_other, not msg_scripted/],
    [
      'a second message.started',
      raw('message.started', 2, { message: { id: 'msg_two', content: [] } }),
      /second message\.started/,
    ],
  ])('refuses %s with an InvalidResponseError naming the event', async (_, afterStarted, message) => {
    const { client } = await clientOf({ afterStarted });
    const stream = await client.messages.stream(CONVERSATION);
    const error = await stream.finalText().catch((thrown: unknown) => thrown);
    expect(InvalidResponseError.is(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(stream.message?.blocks[0]?.text).toBe('');
  });

  it('ends with a TimeoutError when only keep-alives come, however often', async () => {
    const { client } = await clientOf({ keepAliveMs: 10 });
    const stream = await client.messages.stream(CONVERSATION, {}, { idleTimeoutMs: 150 });
    const error = await stream.finalText().catch((thrown: unknown) => thrown);
    expect(TimeoutError.is(error)).toBe(true);
  });
});

describe('a reply whose stream echoes a patch of another message', () => {
  it('does not apply it: it falls back to append and writes exactly its text', async () => {
    const { client, server } = await clientOf({ afterStarted: patch(2, 'intruder', 'msg_other') });
    const { reply, result } = await writeReply(client);
    expect(reply.transport).toBe('append');
    expect(result).toMatchObject({ text, outcome: 'complete' });
    expect(server.message.text).toBe(text);
  });
});
