// Measurement 1: client CPU per send call (process.cpuUsage) against a loopback node:http server in
// another process: the SDK's messages.send vs raw fetch + JSON.parse, bare ky, and undici.request.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import ky from 'ky';
import { request as undiciRequest } from 'undici';
import { AgentClient } from '../src/index.js';
import { progress, ROOT, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median } from './lib/stats.js';

const API_KEY = 'ams_sk_benchbenchbenchbenchbenchbenchbe';
const CONVERSATION = 'cnv_bench';
const TEXT = 'Hello from the send benchmark: a short message like most bots send.';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const WARMUP = 400;
const IN_FLIGHT = 16;

type Send = () => Promise<unknown>;

const LABELS: Record<string, string> = {
  sdk: 'SDK `messages.send`',
  fetch: 'raw fetch + JSON.parse',
  ky: 'bare ky (defaults)',
  'ky-sdk-options': "ky with the SDK's options (retry 0, timeout false)",
  undici: 'undici.request (floor)',
};

/** The same request every variant sends: the send shape with a fresh Idempotency-Key. */
function variants(baseUrl: string): Record<string, Send> {
  const url = `${baseUrl}/v1/conversations/${CONVERSATION}/messages`;
  const body = () =>
    JSON.stringify({
      schema: 'svc.agent-send.v1',
      content: [{ type: 'text', text: TEXT }],
      fallbackText: TEXT,
    });
  const headers = () => ({
    authorization: `Bearer ${API_KEY}`,
    'content-type': 'application/json',
    accept: 'application/json',
    'idempotency-key': randomUUID(),
  });
  const client = new AgentClient({ apiKey: API_KEY, baseUrl });
  const tunedKy = ky.create({ retry: 0, timeout: false });
  return {
    sdk: () => client.messages.send(CONVERSATION, { text: TEXT }),
    fetch: async () => {
      const response = await fetch(url, { method: 'POST', headers: headers(), body: body() });
      return JSON.parse(await response.text());
    },
    ky: () => ky.post(url, { headers: headers(), body: body() }).json(),
    // ky as the SDK configures it: what the SDK adds on top of its transport.
    'ky-sdk-options': () => tunedKy.post(url, { headers: headers(), body: body() }).json(),
    undici: async () => {
      const response = await undiciRequest(url, { method: 'POST', headers: headers(), body: body() });
      return response.body.json();
    },
  };
}

async function runCalls(send: Send, calls: number, inFlight: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < calls) {
      next += 1;
      await send();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/** Microseconds of this process's CPU (user + system) per call. */
async function cpuPerCall(send: Send, calls: number, inFlight: number): Promise<number> {
  const before = process.cpuUsage();
  await runCalls(send, calls, inFlight);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

function startServer(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, ['bench/lib/send-server.mjs'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const { port } = JSON.parse(line) as { port: number };
      resolve({ child, baseUrl: `http://127.0.0.1:${port}` });
    });
  });
}

/** Runs every variant in both modes, rounds interleaved (the order rotates), and answers the medians. */
export async function measureSendCpu(): Promise<Outcome> {
  const { child, baseUrl } = await startServer();
  try {
    const sends = variants(baseUrl);
    const names = Object.keys(sends);
    const samples = new Map<string, number[]>();
    for (const name of names) await runCalls(sends[name]!, WARMUP, IN_FLIGHT);
    for (let round = 0; round < ROUNDS; round++) {
      progress(`send-cpu: round ${round + 1}/${ROUNDS}`);
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      for (const inFlight of [1, IN_FLIGHT]) {
        for (const name of order) {
          const key = `${name}/${inFlight}`;
          samples.set(key, [...(samples.get(key) ?? []), await cpuPerCall(sends[name]!, CALLS, inFlight)]);
        }
      }
    }
    const us = (name: string, inFlight: number) => median(samples.get(`${name}/${inFlight}`) ?? []);
    // Ratios are taken within each round (the two clients ran minutes apart at most), then the median.
    const paired = (name: string, base: string, inFlight: number) => {
      const a = samples.get(`${name}/${inFlight}`) ?? [];
      const b = samples.get(`${base}/${inFlight}`) ?? [];
      return median(a.map((value, i) => value / b[i]!));
    };
    const modes = [
      { label: 'sequential', inFlight: 1 },
      { label: `${IN_FLIGHT} in flight`, inFlight: IN_FLIGHT },
    ];
    const rows = modes.map(({ label, inFlight }) => {
      const toKy = paired('sdk', 'ky', inFlight);
      return {
        measurement: `1. send CPU, ${label}`,
        result: `${fmt(us('sdk', inFlight))} µs/call: ${fmt(toKy, 2)}x bare ky, ${fmt(paired('sdk', 'fetch', inFlight), 2)}x raw fetch, ${fmt(paired('sdk', 'undici', inFlight), 2)}x undici`,
        goal: '<= 1.15x bare ky',
        status: toKy <= 1.15 ? ('met' as const) : ('NOT MET' as const),
      };
    });
    const table = markdownTable(
      [
        'Client',
        ...modes.map((mode) => `µs CPU/call, ${mode.label}`),
        ...modes.map((mode) => `vs bare ky, ${mode.label}`),
      ],
      names.map((name) => [
        LABELS[name] ?? name,
        ...modes.map((mode) => fmt(us(name, mode.inFlight), 1)),
        ...modes.map((mode) => `${fmt(paired(name, 'ky', mode.inFlight), 2)}x`),
      ]),
    );
    const details = [
      `Median of ${ROUNDS} rounds of ${CALLS} calls per client and mode (after ${WARMUP} warm-up calls each); ` +
        'CPU of the client process only (the server runs in another process); ratios are the median of the ' +
        'ratios within each round. Every client sends the same ' +
        'request (send shape, bearer, a fresh Idempotency-Key) and parses the JSON answer.',
      '',
      table,
    ];
    return { rows, details };
  } finally {
    child.kill();
  }
}

/** The SDK's send against the same server, for a CPU profile; `close` stops the server. */
export async function sdkSends(): Promise<{ send: Send; close: () => void }> {
  const { child, baseUrl } = await startServer();
  return { send: variants(baseUrl).sdk!, close: () => child.kill() };
}

runAsChild(import.meta.url, measureSendCpu);
