// The servers of measurement 11, in one process (bench/lib/server-child.ts): the mock behind its
// loopback door with an agent and a conversation ready, and bare node:http answering the same JSON
// (the floor). `inprocess` runs plain sends through mock.fetch in this process, without HTTP (a
// process of its own does that, so its work never lands in the door's CPU windows). The
// mock is the built package when BENCH_DOOR_DIST names its folder (what users run: no tsx helpers
// around every function), else the source under tsx.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveCommands } from './server-child.js';

const dist = process.env.BENCH_DOOR_DIST;
const { createMockService } = (
  dist
    ? await import(pathToFileURL(join(dist, 'testing/index.js')).href)
    : await import('../../src/testing/index.js')
) as typeof import('../../src/testing/index.js');

/** What the client needs to address the two servers. */
export interface DoorInfo {
  mockUrl: string;
  bareUrl: string;
  apiKey: string;
  conversationId: string;
}

const TEXT = 'Hello from the door benchmark: a short message like most bots send.';
// An active agent and one user's conversation with it; webhook deliveries are answered in process.
const mock = createMockService({ fetch: async () => new Response(null, { status: 204 }) });
const door = await mock.listen({ port: 0 });
const seed = await mock.seed({
  handle: `bench_${process.pid}`,
  displayName: 'Bench',
  webhookUrl: 'http://hook.bench/',
  capabilities: ['text'],
  userName: 'User 1',
});
const { conversationId, apiKey } = seed;

let counter = 0;
const bare = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    counter += 1;
    const sent = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
      content?: { text?: string }[];
    };
    const body = JSON.stringify({
      message: {
        id: `msg_bench${counter}`,
        conversation_id: conversationId,
        status: 'sent',
        parts: [{ part_index: 0, type: 'text', text: sent.content?.[0]?.text ?? '' }],
      },
    });
    res.writeHead(201, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'request-id': `req_bench${counter}`,
    });
    res.end(body);
  });
});
bare.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));

/** The body of a plain send. */
export const sendBody = JSON.stringify({
  schema: 'svc.agent-send.v1',
  content: [{ type: 'text', text: TEXT }],
});

/** Plain sends through mock.fetch, 16 at a time: µs of CPU per call, the mock's own logic. */
async function inProcess(): Promise<number> {
  const calls = Number(process.env.BENCH_CALLS ?? 1000);
  const url = `${door.baseUrl}/v1/conversations/${conversationId}/messages`;
  let next = 0;
  const before = process.cpuUsage();
  const lane = async () => {
    while (next++ < calls) {
      const response = await mock.fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': `door-${process.pid}-${next}-${Math.random()}`,
        },
        body: sendBody,
      });
      if (response.status !== 201) throw new Error(`mock.fetch answered ${response.status}`);
      await response.text();
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

// A scavenge of the young generation (node --expose-gc), ending each turn inside its own CPU window:
// every turn then starts with an empty young generation and pays for the garbage it made, not for
// what the turn before it left.
const gcYoung = () => {
  (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' });
  return true;
};

serveCommands(
  {
    mockUrl: door.baseUrl,
    bareUrl: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`,
    apiKey,
    conversationId,
  } satisfies DoorInfo,
  { inprocess: inProcess, 'gc-young': gcYoung },
);
