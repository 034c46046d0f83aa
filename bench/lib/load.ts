// Load for a server child: `calls` requests over `inFlight` keep-alive connections (an undici Pool),
// and the server's CPU per request, read from the child before and after.
import { Pool } from 'undici';
import type { ServerChild } from './server-child.js';

/** One request as undici takes it. */
export interface LoadRequest {
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** A target: where to send and how to make the i-th request. */
export interface Target {
  origin: string;
  request: (i: number) => LoadRequest;
  /** Checks an answer; a failed check stops the run (a benchmark of errors measures nothing). */
  expectStatus: number;
}

const pools = new Map<string, Pool>();

/**
 * Sends `calls` requests with `inFlight` at once and answers the server's µs of CPU per request.
 * With `settle`, a server command run after the load and before the CPU is read again (counted):
 * `gc-young` makes each turn pay for its own young generation, not the one a previous turn left.
 */
export async function serverCpuPerCall(
  server: ServerChild<unknown>,
  target: Target,
  calls: number,
  inFlight: number,
  settle?: string,
): Promise<number> {
  let pool = pools.get(target.origin);
  if (!pool) {
    pool = new Pool(target.origin, { connections: inFlight, pipelining: 1 });
    pools.set(target.origin, pool);
  }
  const requests = Array.from({ length: calls }, (_, i) => target.request(i));
  const before = await server.cpu();
  let next = 0;
  const lane = async () => {
    while (next < calls) {
      const request = requests[next++]!;
      const answer = await pool.request(request);
      const text = await answer.body.text();
      if (answer.statusCode !== target.expectStatus) {
        throw new Error(
          `${target.origin}${request.path} answered ${answer.statusCode}: ${text.slice(0, 200)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  if (settle) await server.command(settle);
  return ((await server.cpu()) - before) / calls;
}

/** Closes every pool opened by serverCpuPerCall. */
export async function closePools(): Promise<void> {
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  pools.clear();
}
