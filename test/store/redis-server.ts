// A real Redis for the tests: `redis-server` (installed by scripts/ensure-redis.sh) started on a free
// loopback port with no persistence, one per test file, and stopped after it. With REDIS_URL set the
// tests use that server instead (each test picks its own key prefix, so files never collide). The
// cluster soak also starts one with persistence (the append-only file in a directory of its own) and
// restarts, pauses and resumes it on its port.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisStore } from 'agent-messaging/redis';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll } from 'vitest';

/** A running Redis and how to reach it. */
export interface TestRedis {
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  /** True when this file started the server (so a test may stop it); false for REDIS_URL. */
  owned: boolean;
  /** Stops the server this file started; nothing for REDIS_URL. */
  stop(): Promise<void>;
  /** Sends a signal to the server this file started (SIGSTOP and SIGCONT pause and resume it). */
  signal(signal: NodeJS.Signals): void;
  /**
   * Stops the server (SIGTERM: it writes its data, as a restart does; SIGKILL: a crash), waits
   * `downMs`, starts it again on its port.
   */
  restart(downMs?: number, signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/** How the server keeps its data. */
export interface RedisOptions {
  /** The append-only file on, fsynced every second (`appendonly yes`, `appendfsync everysec`). */
  appendonly?: boolean;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

async function spawnOn(port: number, dir: string | undefined): Promise<ChildProcess | undefined> {
  const persistence = dir
    ? ['--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec']
    : ['--appendonly', 'no'];
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--daemonize', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const ready = new Promise<boolean>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve(true);
    });
    child.once('error', reject); // redis-server missing: run scripts/ensure-redis.sh
    child.once('exit', () => resolve(false));
  });
  if (await ready) return child;
  if (output.includes('Address already in use')) return undefined; // lost the port race: try another
  throw new Error(`redis-server did not start:\n${output.slice(-2000)}`);
}

/** Starts a Redis for one test file (call in `beforeAll`, stop in `afterAll`). */
export async function startRedis(options: RedisOptions = {}): Promise<TestRedis> {
  const external = process.env.REDIS_URL;
  if (external) {
    const refuse = () => {
      throw new Error('REDIS_URL: a server this process did not start cannot be signalled or restarted');
    };
    return {
      url: external,
      owned: false,
      stop: async () => {},
      signal: refuse,
      restart: async () => refuse(),
    };
  }
  const dir = options.appendonly ? mkdtempSync(join(tmpdir(), 'redis-aof-')) : undefined;
  const ended = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
  const end = async (child: ChildProcess, signal: NodeJS.Signals) => {
    if (ended(child)) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const first = await spawnOn(port, dir);
    if (!first) continue;
    let child = first;
    return {
      url: `redis://127.0.0.1:${port}`,
      owned: true,
      async stop() {
        await end(child, 'SIGKILL');
        if (dir) rmSync(dir, { recursive: true, force: true });
      },
      signal: (signal) => void child.kill(signal),
      async restart(downMs = 0, signal = 'SIGTERM') {
        await end(child, signal);
        await new Promise((resolve) => setTimeout(resolve, downMs));
        const next = await spawnOn(port, dir);
        if (!next) throw new Error(`redis-server: port ${port} was taken while it restarted`);
        child = next;
      },
    };
  }
  throw new Error('redis-server: no free loopback port after 5 tries');
}

/** A connected node-redis client; the caller closes it. */
export async function connectClient(url: string, options: { reconnect?: boolean } = {}) {
  const client = createClient({
    url,
    socket: options.reconnect === false ? { reconnectStrategy: false } : { reconnectStrategy: () => 50 },
  });
  client.on('error', () => {}); // reconnect attempts after a test cut the server are expected
  await client.connect();
  return client;
}

/** A key prefix no other test (or test file sharing REDIS_URL) uses. */
export const uniquePrefix = (name: string) =>
  `test:${name}:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;

/**
 * The Redis of one test file, its raw client and its cleanups, set up by the vitest hooks this
 * registers: the server started before the file's tests and stopped after them, `cleanups` run after
 * each test (latest first, failures ignored). `server` and `raw` are read once the tests run.
 */
export function redisForFile() {
  const file = {
    server: undefined as unknown as TestRedis,
    raw: undefined as unknown as Awaited<ReturnType<typeof connectClient>>,
    cleanups: [] as (() => Promise<unknown>)[],
    /** A Redis store on a connection of its own (as one instance of a bot), closed after the test. */
    async store(prefix: string) {
      const client = await connectClient(file.server.url);
      const store = createRedisStore({ client, prefix });
      file.cleanups.push(async () => {
        await store.close();
        client.destroy();
      });
      return store;
    },
  };
  beforeAll(async () => {
    file.server = await startRedis();
    file.raw = await connectClient(file.server.url);
  });
  afterEach(async () => {
    for (const cleanup of file.cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    file.raw?.destroy();
    await file.server?.stop();
  });
  return file;
}
