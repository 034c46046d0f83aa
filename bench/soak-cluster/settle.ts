// The end of a soak part: wait, in real time, until every message is answered and every handler that
// started has ended. The mock's retry schedule runs on its clock, which reads real time here: its 5 s
// retry comes 5 s later, and its 5-minute retry would come 5 minutes later. When nothing has moved for
// `quietMs` and every message still unanswered has had its first two attempts fail, only the
// 5-minute retry (or a later one) can answer it: the clock is moved on to that retry, and the messages
// still unanswered at that moment are counted as having waited for it. They are never hidden by a
// compressed schedule: a message answered after a move of the clock is counted, whatever answered it.
import type { World } from '../lib/world.js';

/** What a check of the part answers (checkCluster's shape). */
interface Progress {
  settled: boolean;
  progressKey: unknown;
  answeredTexts: ReadonlySet<string>;
}

/** The retries after the first two, in the service's schedule (PROTOCOL.md section 6), in seconds. */
const LATER_RETRIES_S = [300, 1800, 7200];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the part to settle; answers the messages that waited for a later retry, by retry. */
export async function settle(input: {
  world: World;
  /** Every user message's text, and the webhook id that delivered it. */
  eventOf: ReadonlyMap<string, string>;
  check(): Promise<Progress>;
  /** How long nothing may move before the clock goes on to a later retry. */
  quietMs: number;
  /** Gives up on settling after this long (ms). */
  limitMs: number;
}) {
  const waited: { retryS: number; texts: string[] }[] = [];
  const limit = Date.now() + input.limitMs;
  let last = '';
  let quietSince = Date.now();
  for (;;) {
    const state = await input.check();
    if (state.settled || Date.now() > limit) break;
    const key = JSON.stringify(state.progressKey);
    if (key !== last) quietSince = Date.now();
    last = key;
    const pending = [...input.eventOf.keys()].filter((text) => !state.answeredTexts.has(text));
    const retry = LATER_RETRIES_S[waited.length];
    const onlyLaterRetries = pending.length > 0 && pending.every(failedTwice);
    if (retry !== undefined && onlyLaterRetries && Date.now() - quietSince >= input.quietMs) {
      waited.push({ retryS: retry, texts: pending });
      await input.world.mock.clock.advance(retry);
      quietSince = Date.now();
    }
    await sleep(1000);
  }
  return { waited };

  function failedTwice(text: string) {
    const id = input.eventOf.get(text);
    const attempts = input.world.mock.deliveries.filter((d) => d.event_id === id);
    return attempts.length >= 2 && attempts.every((d) => d.status === null || d.status >= 300);
  }
}
