// Soak rows of issue 23: runs that never succeed or stall. Poison messages (a handler that throws
// every time, runs past maxHandlerMs, or ignores its signal and replies late) among normal ones in
// the same conversations must be given up after maxAttempts runs without holding their conversation;
// a paused writer (its process stalls past its lock and its reply's lease while the delivery's retry
// runs on another instance) must not post beside the retry's answer. Each row counts lost, doubled and
// unmarked-cut answers, `complete` outcomes the history does not back, and stuck conversations.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Bot,
  type BotStore,
  createBot,
  createMemoryStore,
  MessageGivenUpError,
} from '../../src/index.js';
import { DEFAULT_INTERRUPTED_NOTE } from '../../src/streaming/options.js';
import type { Row } from '../lib/report.js';
import { fmt, seededRandom } from '../lib/stats.js';
import { agentMessages, startWorld, textOf, type World } from '../lib/world.js';

/** How big a run is. */
export interface StuckRunSize {
  messages: number;
  conversations: number;
  seed: number;
}

/** What a row checks, counted over every message. */
interface Tally {
  lost: number;
  doubled: number;
  unmarked: number;
  falseComplete: number;
  stuck: number;
}

const WORDS = [' alpha', ' beta', ' Grüße', ' 世界', ' 🙂', ',', '.', ' delta'];

/** A model's answer: `[msg n]` and 20 to 80 words. */
const answerFor = (n: number, random: () => number) => [
  `[msg ${n}]`,
  ...Array.from(
    { length: 20 + Math.floor(random() * 60) },
    () => WORDS[Math.floor(random() * WORDS.length)]!,
  ),
];

/** A model streaming `words`, a turn of the event loop per word; `hold` (when given) waits before `at`. */
async function* model(words: readonly string[], hold?: { at: number; until: () => Promise<void> }) {
  for (const [index, word] of words.entries()) {
    if (index === hold?.at) await hold.until();
    await new Promise((resolve) => setImmediate(resolve));
    yield word;
  }
}

/** The tag a message's text starts with, `[msg n]`. */
const tagOf = (text: string) => /^\[msg \d+\]/.exec(text)?.[0] ?? '?';

/**
 * Reads every conversation's history and checks it: `whole` holds the answers that must appear exactly
 * once, sent in full; `none` the tags that may show only marked cuts; `outcomes` every `complete` a
 * reply reported, which the history must back with its whole text.
 */
async function check(
  world: World,
  whole: Map<string, string>,
  none: Set<string>,
  outcomes: Map<string, string>,
): Promise<Omit<Tally, 'stuck'>> {
  const tally = { lost: 0, doubled: 0, unmarked: 0, falseComplete: 0 };
  const byTag = new Map<string, { text: string; status: string }[]>();
  const byId = new Map<string, { text: string; status: string }>();
  for (const conversation of world.conversations) {
    for (const message of await agentMessages(world, conversation)) {
      const seen = { text: textOf(message) ?? '', status: message.status };
      byTag.set(tagOf(seen.text), [...(byTag.get(tagOf(seen.text)) ?? []), seen]);
      byId.set(message.id, seen);
    }
  }
  const cut = (seen: { text: string; status: string }) =>
    seen.status === 'sent' && seen.text.endsWith(DEFAULT_INTERRUPTED_NOTE);
  for (const [tag, text] of whole) {
    const seen = byTag.get(tag) ?? [];
    const full = seen.filter((entry) => entry.text === text && entry.status === 'sent').length;
    if (full === 0) tally.lost += 1;
    if (full > 1) tally.doubled += 1;
    // Besides its one whole answer, a message may show cuts of it, each marked.
    tally.unmarked += seen.filter((entry) => entry.text !== text && !cut(entry)).length;
  }
  for (const tag of none) {
    const seen = byTag.get(tag) ?? [];
    // A poison message answers nothing whole: a late reply that got through is a doubled answer.
    tally.doubled += seen.filter((entry) => !entry.text.endsWith(DEFAULT_INTERRUPTED_NOTE)).length;
    tally.unmarked += seen.filter((entry) => entry.status !== 'sent').length;
  }
  for (const [id, text] of outcomes) {
    const seen = byId.get(id);
    if (!seen || seen.text !== text || seen.status !== 'sent') tally.falseComplete += 1;
  }
  return tally;
}

/** Conversations whose queue still holds a message or whose lock is still held, in a memory store. */
async function stuckConversations(store: BotStore, world: World) {
  let stuck = 0;
  for (const conversation of world.conversations) {
    const queued = await store.readQueued(`queue:${conversation}`);
    const lock = await store.acquireLock(`conversation:${conversation}`, 1);
    if (lock) await store.releaseLock(lock);
    if (queued.length > 0 || !lock) stuck += 1;
  }
  return stuck;
}

/** Events of `message.received` that never got a 2xx. */
function unanswered(world: World) {
  const received = world.mock.deliveries.filter((delivery) => delivery.type === 'message.received');
  const acked = new Set(received.filter((d) => d.status !== null && d.status < 300).map((d) => d.event_id));
  return new Set(received.map((d) => d.event_id).filter((id) => !acked.has(id))).size;
}

/**
 * Moves the service's retries on (5 s, 5 min, ...) until every delivery was answered 2xx, for at most
 * `limitMs`: a conversation that never settles is counted stuck, not waited on forever.
 */
async function retryUntilAnswered(world: World, bots: readonly Bot[], limitMs: number) {
  const settle = async () => {
    for (const seconds of [5, 300, 1800, 7200, 18_000, 36_000]) {
      await world.mock.idle();
      await Promise.all(bots.map((bot) => bot.idle()));
      if (unanswered(world) === 0) return;
      await world.mock.clock.advance(seconds);
    }
    await world.mock.idle();
    await Promise.all(bots.map((bot) => bot.idle()));
  };
  const limit = new AbortController();
  await Promise.race([settle(), sleep(limitMs, undefined, { signal: limit.signal }).catch(() => undefined)]);
  limit.abort();
}

/** How long a row may take to settle before what is left counts as stuck. */
const limitFor = (size: StuckRunSize) => 30_000 + 1_000 * size.messages;

const rowOf = (measurement: string, tally: Tally, extra: string, ok: boolean): Row => ({
  measurement,
  result:
    `${tally.lost} lost, ${tally.doubled} doubled, ${tally.unmarked} unmarked cut, ` +
    `${tally.falseComplete} false complete, ${tally.stuck} stuck; ${extra}`,
  goal: '0 lost, 0 doubled, 0 unmarked cut, 0 false complete, 0 stuck',
  status: ok ? 'met' : 'NOT MET',
});

const clean = (tally: Tally) =>
  tally.lost + tally.doubled + tally.unmarked + tally.falseComplete + tally.stuck === 0;

/** How a poison message fails: it throws, runs past maxHandlerMs (cut), or ignores its signal. */
type Poison = 'throws' | 'slow' | 'deaf';

/** Poison messages among normal ones under 'queue': each given up once, none holding its conversation. */
export async function soakPoison(size: StuckRunSize) {
  const maxHandlerMs = 300;
  const lockTtlMs = 300;
  let deliver: (request: Request) => Promise<Response> = async () => new Response(null, { status: 204 });
  const world = await startWorld({
    users: size.conversations,
    mock: { fetch: (request) => deliver(request) },
  });
  try {
    const random = seededRandom(size.seed + 23);
    const store = createMemoryStore();
    const bot = createBot({
      apiKey: world.apiKey,
      webhookSecret: world.webhookSecret,
      baseUrl: world.baseUrl,
      store,
      maxHandlerMs,
      lockTtlMs,
      maxAttempts: 3,
    });
    const plans = new Map<string, { words: string[]; poison: Poison | undefined }>();
    const whole = new Map<string, string>();
    const none = new Set<string>();
    const outcomes = new Map<string, string>();
    const late = new Set<Promise<unknown>>();
    const given = new Map<string, number>();
    const failures: string[] = [];
    bot.onError((error) => {
      if (MessageGivenUpError.is(error)) given.set(error.webhookId, (given.get(error.webhookId) ?? 0) + 1);
    });
    bot.on('message.received', async (ctx) => {
      const plan = plans.get(tagOf(ctx.text));
      if (!plan) throw new Error(`no plan for ${ctx.text}`);
      if (plan.poison === 'throws') throw new Error('poison: the model always fails');
      if (plan.poison === 'deaf') {
        // Ignores its signal: runs on past maxHandlerMs and its grace, then tries to post.
        const attempt = sleep(maxHandlerMs + lockTtlMs + 300).then(() =>
          ctx.reply(`${plan.words[0]} LATE`).then(
            (result) => failures.push(`${plan.words[0]}: a late reply went out (${result.outcome})`),
            () => undefined,
          ),
        );
        late.add(attempt);
        await attempt;
        return;
      }
      const reply = await ctx.reply(
        plan.poison === 'slow'
          ? model(plan.words, { at: 3, until: () => new Promise<void>(() => {}) })
          : model(plan.words),
      );
      if (reply.outcome === 'complete') outcomes.set(reply.message_id, plan.words.join(''));
    });
    deliver = (request) => bot.fetch(request);
    const counts = { normal: 0, throws: 0, slow: 0, deaf: 0 };
    for (let n = 0; n < size.messages; n++) {
      const roll = random();
      const poison: Poison | undefined =
        roll < 0.05 ? 'throws' : roll < 0.1 ? 'slow' : roll < 0.15 ? 'deaf' : undefined;
      counts[poison ?? 'normal'] += 1;
      const words = answerFor(n, random);
      plans.set(`[msg ${n}]`, { words, poison });
      if (poison) none.add(`[msg ${n}]`);
      else whole.set(`[msg ${n}]`, words.join(''));
      const conversation = n % size.conversations;
      world.mock.postUserMessage(world.conversations[conversation]!, {
        user_id: world.userIds[conversation]!,
        text: `[msg ${n}] ${poison ?? 'normal'}`,
      });
    }
    const started = performance.now();
    await retryUntilAnswered(world, [bot], limitFor(size));
    await Promise.all(late);
    const seconds = (performance.now() - started) / 1000;
    const poisonIds = world.mock.deliveries
      .filter((d) => d.type === 'message.received' && given.has(d.event_id))
      .map((d) => d.event_id);
    const givenOnce = [...given.values()].filter((times) => times === 1).length;
    const tally: Tally = {
      ...(await check(world, whole, none, outcomes)),
      stuck: (await stuckConversations(store, world)) + unanswered(world),
    };
    const poisons = counts.throws + counts.slow + counts.deaf;
    const ok = clean(tally) && failures.length === 0 && givenOnce === poisons && given.size === poisons;
    const rows = [
      rowOf(
        `poison messages (${counts.throws} throw, ${counts.slow} past maxHandlerMs, ${counts.deaf} ignore their signal) among ${fmt(counts.normal)} normal ones`,
        tally,
        `${givenOnce}/${poisons} given up once`,
        ok,
      ),
    ];
    const details = [
      `${fmt(size.messages)} messages over ${size.conversations} conversations under \`'queue'\` (seed ${size.seed}), ` +
        `maxHandlerMs ${maxHandlerMs} ms, lockTtlMs ${lockTtlMs} ms, maxAttempts 3: a poison message's handler throws ` +
        'every time, or streams a reply and stalls past maxHandlerMs (its reply ends marked), or ignores its signal and ' +
        'tries `ctx.reply` after its grace (which must be refused). The service retries on its clock until every ' +
        `delivery is answered 2xx (${fmt(new Set(poisonIds).size)} given up); every normal message must be answered ` +
        `exactly once in full and every conversation end with its queue empty and its lock free. ${fmt(seconds, 1)} s.`,
      ...failures.slice(0, 10).map((failure) => `- ${failure}`),
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}

/** A store whose every call waits while it is paused, as a stopped process's would. */
function pausable(inner: BotStore) {
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const store = new Proxy(inner, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        while (gate) await gate;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store,
    pause() {
      gate ??= new Promise<void>((resolve) => {
        open = resolve;
      });
    },
    resume() {
      gate = undefined;
      open?.();
    },
  };
}

/**
 * Two instances on one store; every first delivery reaches A, every retry B. Some of A's replies
 * stall mid-stream with A itself paused (its store calls wait): its lock, its claim and its reply's
 * lease expire, its delivery is answered 409, the service's retry runs the message on B, and only
 * then does A go on. A must then post nothing more beside B's answer, nor report `complete`.
 */
export async function soakPausedWriter(size: StuckRunSize) {
  const lockTtlMs = 300;
  const writerLeaseMs = 1000;
  let deliver: (request: Request) => Promise<Response> = async () => new Response(null, { status: 204 });
  const world = await startWorld({
    users: size.conversations,
    mock: { fetch: (request) => deliver(request) },
  });
  try {
    const random = seededRandom(size.seed + 29);
    const shared = createMemoryStore();
    const paused = pausable(shared);
    const plans = new Map<string, { words: string[]; pauses: boolean }>();
    const whole = new Map<string, string>();
    const outcomes = new Map<string, string>();
    let stalled: (() => void) | undefined;
    let going: Promise<void> = Promise.resolve();
    const make = (store: BotStore, ackTimeoutMs: number, name: 'a' | 'b') => {
      const bot = createBot({
        apiKey: world.apiKey,
        webhookSecret: world.webhookSecret,
        baseUrl: world.baseUrl,
        store,
        lockTtlMs,
        ackTimeoutMs,
      });
      bot.onError(() => undefined); // the failures are the point here; the history is checked
      bot.on('message.received', async (ctx) => {
        const plan = plans.get(tagOf(ctx.text));
        if (!plan) throw new Error(`no plan for ${ctx.text}`);
        const hold =
          name === 'a' && plan.pauses
            ? {
                at: Math.floor(plan.words.length / 2),
                until: async () => {
                  paused.pause();
                  stalled?.();
                  await going;
                },
              }
            : undefined;
        const reply = await ctx.reply(model(plan.words, hold), {
          writerLeaseMs,
          writerWaitMs: 3 * writerLeaseMs,
        });
        if (reply.outcome === 'complete') outcomes.set(reply.message_id, plan.words.join(''));
      });
      return bot;
    };
    const a = make(paused.store, 200, 'a');
    const b = make(shared, 8000, 'b');
    const seen = new Set<string>();
    deliver = (request) => {
      const id = request.headers.get('webhook-id') ?? '';
      const first = !seen.has(id);
      seen.add(id);
      return (first ? a : b).fetch(request);
    };
    let pauses = 0;
    const started = performance.now();
    for (let n = 0; n < size.messages; n++) {
      const pauses_ = random() < 0.3;
      const words = answerFor(n, random);
      plans.set(`[msg ${n}]`, { words, pauses: pauses_ });
      whole.set(`[msg ${n}]`, words.join(''));
      const conversation = n % size.conversations;
      const hasStalled = new Promise<void>((resolve) => {
        stalled = resolve;
      });
      let resume!: () => void;
      going = new Promise<void>((resolve) => {
        resume = resolve;
      });
      world.mock.postUserMessage(world.conversations[conversation]!, {
        user_id: world.userIds[conversation]!,
        text: `[msg ${n}]`,
      });
      if (pauses_) {
        pauses += 1;
        await hasStalled;
        // A's answer (409 at its ackTimeoutMs), then its lock, claim and lease expire, unrenewed.
        await sleep(writerLeaseMs + 2 * lockTtlMs);
        await world.mock.clock.advance(5); // the service's retry, on B
        await world.mock.idle();
        await b.idle();
        paused.resume();
        resume();
      } else resume();
      await world.mock.idle();
      await Promise.all([a.idle(), b.idle()]);
    }
    await retryUntilAnswered(world, [a, b], limitFor(size));
    const seconds = (performance.now() - started) / 1000;
    const tally: Tally = {
      ...(await check(world, whole, new Set(), outcomes)),
      stuck: (await stuckConversations(shared, world)) + unanswered(world),
    };
    const ok = clean(tally);
    const rows = [
      rowOf(
        `a paused writer: ${fmt(pauses)} of ${fmt(size.messages)} replies stalled past their lease, retried on another instance`,
        tally,
        `${fmt(outcomes.size)} complete outcomes checked`,
        ok,
      ),
    ];
    const details = [
      `${fmt(size.messages)} streamed replies over ${size.conversations} conversations on two instances sharing one store ` +
        `(seed ${size.seed}), lockTtlMs ${lockTtlMs} ms, writerLeaseMs ${writerLeaseMs} ms: ${fmt(pauses)} of the first ` +
        "instance's replies stall halfway with the instance paused (its store calls wait) until the service's retry " +
        'has run the message on the second instance; then it goes on. Each message must show one whole answer (and at ' +
        `most marked cuts), and every \`complete\` outcome the history's whole text. ${fmt(seconds, 1)} s.`,
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}
