// Measurement 11: the mock's loopback door. Server CPU per plain send at 16 in flight, the mock behind
// its node:http door against bare node:http answering the same JSON, and the mock's own logic
// (mock.fetch, no HTTP), so the door's share shows. Each is served by a process of its own, so the
// collector of one never runs in another's CPU window: the mock's growing state is collected on the
// mock's turns only, and the in-process sends (which allocate far more) never pay for the door's
// garbage. Each turn ends with a scavenge of the young generation, counted in it.
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { buildPackage } from './lib/build.js';
import { progress, runAsChild } from './lib/child.js';
import type { DoorInfo } from './lib/door-server.js';
import { closePools, serverCpuPerCall, type Target } from './lib/load.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { profileChild, type ServerChild, startServerChild } from './lib/server-child.js';
import { fmt, median } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const IN_FLIGHT = 16;
// Each round alternates the two servers in chunks of this many calls (CALLS per server in all), so a
// change in the machine's load lands on both sides of a round's ratio instead of on one.
const CHUNKS = 4;
const TEXT = 'Hello from the door benchmark: a short message like most bots send.';
const BODY = JSON.stringify({ schema: 'svc.agent-send.v1', content: [{ type: 'text', text: TEXT }] });

const LABELS: Record<string, string> = {
  mock: 'the mock behind its loopback door (`mock.listen()`)',
  bare: 'bare node:http answering the same JSON (the floor)',
  inprocess: 'the mock in process (`mock.fetch`, no HTTP)',
};

export async function measureMockDoor(): Promise<Outcome> {
  // The mock runs the built package, as users do (BENCH_DOOR_SOURCE=1: the source under tsx).
  if (process.env.BENCH_DOOR_SOURCE !== '1') process.env.BENCH_DOOR_DIST = dirname(await buildPackage());
  // Three server processes: the mock's door is measured in one, the floor in another, the mock in
  // process in the third (each starts both servers; the ones not measured there stay idle).
  const children: ServerChild<DoorInfo>[] = [];
  const start = async () => {
    const child = await startServerChild<DoorInfo>('lib/door-server.ts', ['--expose-gc']);
    children.push(child);
    return child;
  };
  const closeAll = () => Promise.all(children.map((child) => child.close()));
  const [server, floor, inprocess] = await Promise.all([start(), start(), start()]).catch(
    async (error: unknown) => {
      await closeAll();
      throw error;
    },
  );
  const servers: Record<string, ServerChild<DoorInfo>> = { mock: server, bare: floor };
  try {
    const { info } = server;
    const send = (origin: string, expectStatus: number): Target => ({
      origin,
      expectStatus,
      request: () => ({
        path: `/v1/conversations/${info.conversationId}/messages`,
        method: 'POST',
        headers: {
          authorization: `Bearer ${info.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: BODY,
      }),
    });
    const targets: Record<string, Target> = {
      mock: send(info.mockUrl, 201),
      bare: send(floor.info.bareUrl, 201),
    };
    const names = [...Object.keys(targets), 'inprocess'];
    const samples = new Map<string, number[]>(names.map((name) => [name, []]));
    const chunk = Math.ceil(CALLS / CHUNKS);
    // The two servers of one round, chunk by chunk in turns (the first one alternating by round).
    const served = async (round: number) => {
      const order = round % 2 === 0 ? ['mock', 'bare'] : ['bare', 'mock'];
      const cpu: Record<string, number> = { mock: 0, bare: 0 };
      for (let i = 0; i < CHUNKS; i++) {
        for (const name of order)
          cpu[name]! += await serverCpuPerCall(servers[name]!, targets[name]!, chunk, IN_FLIGHT, 'gc-young');
      }
      for (const name of order) samples.get(name)!.push(cpu[name]! / CHUNKS);
    };
    const inProcess = async () =>
      samples.get('inprocess')!.push(await inprocess.command<number>('inprocess'));
    // Warm-up, then dropped.
    await served(0);
    await inprocess.command<number>('inprocess');
    for (const list of samples.values()) list.length = 0;
    for (let round = 0; round < ROUNDS; round++) {
      progress(`mock-door: round ${round + 1}/${ROUNDS}`);
      if (round % 2 === 0) {
        await served(round);
        await inProcess();
      } else {
        await inProcess();
        await served(round);
      }
    }
    const us = (name: string) => median(samples.get(name)!);
    const paired = (name: string, base: string) =>
      median(samples.get(name)!.map((value, i) => value / samples.get(base)![i]!));
    const toBare = paired('mock', 'bare');
    const rows: Outcome['rows'] = [
      {
        measurement: `11. mock door, plain send, ${IN_FLIGHT} in flight`,
        result: `${fmt(us('mock'), 1)} µs server CPU/call: ${fmt(toBare, 2)}x bare node:http (${fmt(us('bare'), 1)} µs); the mock's own logic in process ${fmt(us('inprocess'), 1)} µs`,
        goal: '<= 2.5x bare node:http',
        status: toBare <= 2.5 ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `Median of ${ROUNDS} rounds of ${CALLS} plain sends per server over ${IN_FLIGHT} keep-alive connections ` +
        `(undici Pool in this process), the two servers taking turns in ${CHUNKS} chunks of ${chunk} within a round; ` +
        'each served by a process of its own, whose CPU is read before and after each chunk, the chunk ending with a ' +
        'scavenge of the young generation (node --expose-gc) counted in it; ratios are taken within each round. ' +
        'Each send carries a bearer token and a fresh Idempotency-Key; the mock stores every message. The in-process ' +
        'row runs the same sends through `mock.fetch` in a third process, so its collections never land in the ' +
        "door's windows. " +
        (process.env.BENCH_DOOR_SOURCE === '1'
          ? 'The mock ran from the source under tsx (BENCH_DOOR_SOURCE=1).'
          : 'The mock ran from the built package (tsup.config.ts, as published; BENCH_DOOR_SOURCE=1 runs the source).'),
      '',
      markdownTable(
        ['Server', 'µs CPU/call', 'vs bare node:http'],
        names.map((name) => [LABELS[name]!, fmt(us(name), 1), `${fmt(paired(name, 'bare'), 2)}x`]),
      ),
      '',
      `Round by round (µs CPU/call, mock / bare = ratio): ${samples
        .get('mock')!
        .map((mock, i) => {
          const bare = samples.get('bare')![i]!;
          return `${fmt(mock, 1)} / ${fmt(bare, 1)} = ${fmt(mock / bare, 2)}x`;
        })
        .join('; ')}.`,
    ];
    if (toBare > 2.5) {
      progress('mock-door: a goal is missed: profiling the server');
      details.push(
        '',
        ...(await profileChild(
          server,
          `\`node:inspector\` in the server process, ${CALLS} sends through the loopback door`,
          () => serverCpuPerCall(server, targets.mock!, CALLS, IN_FLIGHT),
        )),
      );
    }
    return { rows, details };
  } finally {
    await closePools();
    await closeAll();
  }
}

runAsChild(import.meta.url, measureMockDoor);
