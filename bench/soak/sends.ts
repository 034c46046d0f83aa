// Soak part 1: sends under injected faults (503 with Retry-After, drop_after_commit, a delay beyond
// the client's timeout) must end as exactly one message per send, none lost and none doubled.
import type { FaultSpec } from '../../src/testing/index.js';
import type { Row } from '../lib/report.js';
import { fmt, seededRandom } from '../lib/stats.js';
import { agentMessages, startWorld, textOf } from '../lib/world.js';

/** How big a run is. */
export interface SendSoakSize {
  sends: number;
  /** Conversations written to in parallel, one send at a time each (so a fault meets the send it was set for). */
  lanes: number;
  seed: number;
  /** Only delays, into every send, with the client's default retries: shows what the caller sees then. */
  delaysWithDefaultRetries?: boolean;
}

/** The client's timeout in the soak; a delay fault holds the answer past it. */
export const SOAK_TIMEOUT_MS = 1000;
/** Retries per call in the soak: a delayed send meets 409 idempotency_in_progress until its first attempt commits. */
export const SOAK_MAX_RETRIES = 4;

const FAULTS = ['status 503', 'drop_after_commit', 'delay'] as const;
type FaultKind = (typeof FAULTS)[number];

function faultFor(kind: FaultKind, path: string): FaultSpec {
  if (kind === 'status 503') return { method: 'POST', path, fault: 'status', status: 503, retry_after: 1 };
  if (kind === 'drop_after_commit') return { method: 'POST', path, fault: 'drop_after_commit' };
  return { method: 'POST', path, fault: 'delay', delay_ms: SOAK_TIMEOUT_MS + 500 };
}

/** Exactly 30% of the sends, chosen by the seed, each with one fault kind in turn. */
function plan(size: SendSoakSize): Map<number, FaultKind> {
  if (size.delaysWithDefaultRetries)
    return new Map(Array.from({ length: size.sends }, (_, i) => [i, 'delay']));
  const random = seededRandom(size.seed);
  const order = Array.from({ length: size.sends }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const faulty = order.slice(0, Math.round(size.sends * 0.3));
  return new Map(faulty.map((index, n) => [index, FAULTS[n % FAULTS.length]!]));
}

/** Runs the sends and answers the summary rows, detail lines, and whether nothing was lost or doubled. */
export async function soakSends(size: SendSoakSize) {
  const defaults = size.delaysWithDefaultRetries === true;
  const world = await startWorld({
    users: size.lanes,
    client: defaults
      ? { timeoutMs: SOAK_TIMEOUT_MS }
      : { timeoutMs: SOAK_TIMEOUT_MS, maxRetries: SOAK_MAX_RETRIES },
  });
  try {
    const faults = plan(size);
    const before = world.mock.requests.length;
    const failures: string[] = [];
    const started = performance.now();
    await Promise.all(
      world.conversations.map(async (conversation, lane) => {
        const path = `/v1/conversations/${conversation}/messages`;
        for (let i = lane; i < size.sends; i += size.lanes) {
          const kind = faults.get(i);
          if (kind !== undefined) world.mock.faults.inject(faultFor(kind, path));
          try {
            await world.client.messages.send(conversation, { text: `soak send ${i}` });
          } catch (error) {
            failures.push(
              `send ${i} (${kind ?? 'no fault'}): ${(error as Error).name}: ${(error as Error).message}`,
            );
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // What the service holds: every text once, nothing else.
    const seen = new Map<string, number>();
    for (const conversation of world.conversations) {
      for (const message of await agentMessages(world, conversation)) {
        const text = textOf(message) ?? '';
        seen.set(text, (seen.get(text) ?? 0) + 1);
      }
    }
    const stored = [...seen.values()].reduce((sum, count) => sum + count, 0);
    const duplicates = [...seen.values()].filter((count) => count > 1).length;
    const missing = Array.from({ length: size.sends }, (_, i) => `soak send ${i}`).filter(
      (text) => !seen.has(text),
    );
    // On the wire: every retry carried its send's key and body.
    const posts = world.mock.requests
      .slice(before)
      .filter((entry) => entry.method === 'POST' && entry.path.endsWith('/messages'));
    const byKey = new Map<string, Set<string | null>>();
    for (const entry of posts) {
      const key = entry.headers['idempotency-key'] ?? '(none)';
      byKey.set(key, (byKey.get(key) ?? new Set()).add(entry.body));
    }
    const keysWithOneBody = [...byKey.values()].every((bodies) => bodies.size === 1);
    const ok =
      failures.length === 0 &&
      stored === size.sends &&
      duplicates === 0 &&
      missing.length === 0 &&
      byKey.size === size.sends &&
      keysWithOneBody;
    const count = (kind: FaultKind) => [...faults.values()].filter((value) => value === kind).length;
    if (defaults) {
      const stillSent = stored === size.sends && duplicates === 0 && missing.length === 0;
      return {
        // What the service holds is the soak's business; the errors thrown are a finding, not a loss.
        ok: stillSent,
        rows: [
          {
            measurement: `default retries, every send delayed past timeoutMs`,
            result: `${failures.length} of ${fmt(size.sends)} calls threw although ${fmt(stored)} messages were stored once each`,
            goal: 'informational',
            status: 'info',
          } satisfies Row,
        ],
        details: [
          `${fmt(size.sends)} sends, each answered after ${SOAK_TIMEOUT_MS + 500} ms (client timeoutMs ${SOAK_TIMEOUT_MS}, ` +
            `maxRetries left at its default): the retry meets 409 idempotency_in_progress while the first ` +
            `attempt is still held, and the backoff (500 ms, then 1 s, full jitter) can run out first. ` +
            `${failures.length} calls threw; the service holds ${fmt(stored)} messages, ${duplicates} duplicated, ` +
            `${missing.length} missing. ${fmt(seconds, 1)} s.`,
        ],
      };
    }
    const rows: Row[] = [
      {
        measurement: `sends under ${fmt(faults.size)} injected faults`,
        result: `${fmt(stored)} messages for ${fmt(size.sends)} sends, ${duplicates} duplicated, ${missing.length} missing, ${failures.length} calls failed`,
        goal: `exactly ${fmt(size.sends)}, 0 duplicates`,
        status: ok ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `${fmt(size.sends)} sends over ${size.lanes} conversations (one at a time in each); ${fmt(faults.size)} of them ` +
        `(30%, seed ${size.seed}) met a fault on their first attempt: ${count('status 503')} × 503 with Retry-After: 1, ` +
        `${count('drop_after_commit')} × drop_after_commit, ${count('delay')} × a ${SOAK_TIMEOUT_MS + 500} ms delay ` +
        `(client timeoutMs ${SOAK_TIMEOUT_MS}, maxRetries ${SOAK_MAX_RETRIES}). ${fmt(posts.length)} POSTs for ` +
        `${fmt(byKey.size)} Idempotency-Keys, every key always with the same body: ${keysWithOneBody ? 'yes' : 'NO'}. ` +
        `${fmt(seconds, 1)} s.`,
      ...failures.slice(0, 10).map((failure) => `- ${failure}`),
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}
