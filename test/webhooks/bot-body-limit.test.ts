import { describe, expect, it } from 'vitest';
import { createLoop, type Loop, signedRequest } from './harness.js';

const MIB = 1024 * 1024;

/** A signed event body of exactly `bytes` bytes (an event type the SDK does not know, padded). */
function eventOfSize(bytes: number): string {
  const base = {
    schema: 'svc.event.v1',
    eventId: `evt_size_${bytes}`,
    type: 'agent.padded',
    createdAt: new Date().toISOString(),
    agentId: 'agt_1',
    pad: '',
  };
  const empty = JSON.stringify(base).length;
  return JSON.stringify({ ...base, pad: 'x'.repeat(bytes - empty) });
}

/** A loop whose bot counts the events its handlers ran for. */
async function countingLoop(): Promise<{ loop: Loop; ran: string[] }> {
  const loop = await createLoop();
  const ran: string[] = [];
  loop.bot.onAny((ctx) => {
    ran.push(ctx.event.eventId);
  });
  return { loop, ran };
}

/** A body that never ends on its own: 64 KiB per pull, counting what was pulled and whether it was cancelled. */
function endlessBody() {
  const state = { pulled: 0, cancelled: false };
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { body, state };
}

const errorCode = async (response: Response) =>
  ((await response.json()) as { error: { code: string } }).error.code;

describe('bot.fetch limits a delivery body to 1 MiB, as toNodeHandler does', () => {
  it('verifies and runs a signed delivery of exactly 1 MiB', async () => {
    const { loop, ran } = await countingLoop();
    const body = eventOfSize(MIB);
    const response = await loop.bot.fetch(await signedRequest(body, loop.secret));
    expect(response.status).toBe(200);
    expect(ran).toEqual([`evt_size_${MIB}`]);
  });

  it('answers 413 to a signed delivery one byte over, without running a handler', async () => {
    const { loop, ran } = await countingLoop();
    const response = await loop.bot.fetch(await signedRequest(eventOfSize(MIB + 1), loop.secret));
    expect(response.status).toBe(413);
    expect(await errorCode(response)).toBe('payload_too_large');
    expect(ran).toEqual([]);
  });

  it('answers 413 to a declared content-length over the limit before reading the body', async () => {
    const { loop, ran } = await countingLoop();
    const { body, state } = endlessBody();
    const request = new Request('http://bot.test/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(MIB + 1) },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await loop.bot.fetch(request);
    expect(response.status).toBe(413);
    expect(state.pulled).toBeLessThan(MIB);
    expect(ran).toEqual([]);
  });

  it('stops reading a body of no declared length once it passes the limit, and answers 413', async () => {
    const { loop, ran } = await countingLoop();
    const { body, state } = endlessBody();
    const request = new Request('http://bot.test/webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await loop.bot.fetch(request);
    expect(response.status).toBe(413);
    expect(await errorCode(response)).toBe('payload_too_large');
    expect(state.cancelled).toBe(true);
    // What was read is bounded by the limit plus what the stream had queued ahead of the reader.
    expect(state.pulled).toBeLessThan(2 * MIB);
    expect(ran).toEqual([]);
  });
});
