// The servers of measurement 11, in one process (bench/lib/server-child.ts): the mock behind its
// loopback door with an agent and a conversation ready, and bare node:http answering the same JSON
// (the floor). `inprocess` runs plain sends through mock.fetch in this process, without HTTP.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveCommands } from './server-child.js';
import { startWorld } from './world.js';

/** What the client needs to address the two servers. */
export interface DoorInfo {
  mockUrl: string;
  bareUrl: string;
  apiKey: string;
  conversationId: string;
}

const TEXT = 'Hello from the door benchmark: a short message like most bots send.';
const world = await startWorld();
const conversationId = world.conversations[0]!;

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
  const url = `${world.baseUrl}/v1/conversations/${conversationId}/messages`;
  let next = 0;
  const before = process.cpuUsage();
  const lane = async () => {
    while (next++ < calls) {
      const response = await world.mock.fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${world.apiKey}`,
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

serveCommands(
  {
    mockUrl: world.baseUrl,
    bareUrl: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`,
    apiKey: world.apiKey,
    conversationId,
  } satisfies DoorInfo,
  { inprocess: inProcess },
);
