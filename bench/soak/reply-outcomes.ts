// Soak rows of issue 11: replies from a model that fails (before its first token, halfway), each
// followed by the delivery's retry, and two concurrent writers per key. Every case must end with
// 0 lost answers, 0 doubled (or interleaved) texts and 0 cut replies left unmarked.
import { DEFAULT_INTERRUPTED_NOTE } from '../../src/streaming/options.js';
import type { Row } from '../lib/report.js';
import { fmt, seededRandom } from '../lib/stats.js';
import { agentMessages, startWorld, textOf, type World } from '../lib/world.js';

/** How big a run is. */
export interface OutcomeSoakSize {
  replies: number;
  lanes: number;
  seed: number;
}

const WORDS = [' alpha', ' beta', ' Grüße', ' 世界', ' 🙂', ',', '.', ' delta'];

async function* model(words: readonly string[], failAt?: number) {
  for (const [index, word] of words.entries()) {
    if (index === failAt) throw new Error('the model failed');
    yield word;
  }
}

/** What the history holds against what each key should show. */
interface Tally {
  lost: number;
  doubled: number;
  unmarked: number;
}

/** Checks every agent message of the world against `expected` (tag -> the texts it may show, in order). */
async function tally(world: World, expected: Map<string, string[][]>): Promise<Tally> {
  const seen = new Map<string, string[]>();
  const result: Tally = { lost: 0, doubled: 0, unmarked: 0 };
  for (const conversation of world.conversations) {
    for (const message of await agentMessages(world, conversation)) {
      const text = textOf(message) ?? '';
      const tag = /^\[\w+ \d+\]/.exec(text)?.[0] ?? '?';
      if (message.status !== 'sent') result.unmarked += 1;
      seen.set(tag, [...(seen.get(tag) ?? []), text]);
    }
  }
  for (const [tag, choices] of expected) {
    const texts = seen.get(tag) ?? [];
    const match = choices.find((choice) => choice.join('\n') === texts.join('\n'));
    if (match) continue;
    // Not one of the allowed histories: say how it fails.
    const whole = choices.flat().filter((text) => !text.endsWith(DEFAULT_INTERRUPTED_NOTE));
    if (!texts.some((text) => whole.includes(text))) result.lost += 1;
    else if (texts.length > Math.max(...choices.map((choice) => choice.length))) result.doubled += 1;
    else if (texts.some((text) => !text.endsWith(DEFAULT_INTERRUPTED_NOTE) && !whole.includes(text))) {
      result.unmarked += 1;
    } else result.doubled += 1;
  }
  return result;
}

/** Model failures, then the retry: fail before the first token, halfway, or not at all. */
export async function soakModelFailures(size: OutcomeSoakSize) {
  const world = await startWorld({ users: size.lanes });
  try {
    const random = seededRandom(size.seed);
    const expected = new Map<string, string[][]>();
    const failures: string[] = [];
    const counts = { before: 0, halfway: 0, none: 0 };
    await Promise.all(
      world.conversations.map(async (conversation, lane) => {
        for (let n = lane; n < size.replies; n += size.lanes) {
          const words = [
            `[reply ${n}]`,
            ...Array.from(
              { length: 50 + Math.floor(random() * 300) },
              () => WORDS[Math.floor(random() * 8)]!,
            ),
          ];
          const whole = words.join('');
          const kind = (['before', 'halfway', 'none'] as const)[Math.floor(random() * 3)]!;
          counts[kind] += 1;
          const failAt =
            kind === 'before' ? 0 : kind === 'halfway' ? Math.floor(words.length / 2) : undefined;
          const cut = words.slice(0, failAt).join('') + DEFAULT_INTERRUPTED_NOTE;
          expected.set(`[reply ${n}]`, [kind === 'halfway' ? [cut, whole] : [whole]]);
          const transport = random() < 0.5 ? ('stream' as const) : ('append' as const);
          const eventId = `evt_soak_${size.seed}_${n}`;
          const first = await world.client.messages
            .reply(conversation, model(words, failAt), { eventId, transport })
            .then(
              () => undefined,
              (error: unknown) => error,
            );
          if ((first === undefined) !== (kind === 'none'))
            failures.push(`reply ${n} (${kind}): first run ${String(first)}`);
          // The service retries a failed delivery: the same key, a healthy model.
          if (first !== undefined) {
            await world.client.messages
              .reply(conversation, model(words), { eventId, transport })
              .catch((error: unknown) => {
                failures.push(`reply ${n} (${kind}): retry ${String(error)}`);
              });
          }
        }
      }),
    );
    const found = await tally(world, expected);
    const ok = failures.length === 0 && found.lost + found.doubled + found.unmarked === 0;
    const rows: Row[] = [
      {
        measurement: `replies from failing models, then the retry (${fmt(counts.before)} before the first token, ${fmt(counts.halfway)} halfway, ${fmt(counts.none)} healthy)`,
        result: `${found.lost} lost, ${found.doubled} doubled, ${found.unmarked} unmarked cut, ${failures.length} unexpected`,
        goal: '0 lost, 0 doubled, 0 unmarked cut',
        status: ok ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `${fmt(size.replies)} replies of 50 to 350 words over ${size.lanes} conversations, half on \`stream\`, half on \`append\` (seed ${size.seed}): ` +
        'a model failing before its first token must leave no message and its retry the whole answer; one failing halfway must leave its text marked ' +
        `\`${DEFAULT_INTERRUPTED_NOTE.trim()}\` and its retry the whole answer as a new message.`,
      ...failures.slice(0, 10).map((failure) => `- ${failure}`),
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}

/** Two writers of one key at once: one message per key, one writer's whole text, never both. */
export async function soakTwoWriters(size: OutcomeSoakSize) {
  const world = await startWorld({ users: size.lanes });
  try {
    const random = seededRandom(size.seed + 1);
    const expected = new Map<string, string[][]>();
    const failures: string[] = [];
    let replayed = 0;
    await Promise.all(
      world.conversations.map(async (conversation, lane) => {
        for (let n = lane; n < size.replies; n += size.lanes) {
          const texts = ['a', 'b'].map((writer) => [
            `[key ${n}]`,
            ...Array.from({ length: 50 + Math.floor(random() * 200) }, (_, i) => ` ${writer}${i}`),
          ]);
          expected.set(
            `[key ${n}]`,
            texts.map((words) => [words.join('')]),
          );
          const eventId = `evt_pair_${size.seed}_${n}`;
          const transport = random() < 0.5 ? ('stream' as const) : ('append' as const);
          const results = await Promise.allSettled(
            texts.map((words) =>
              world.client.messages.reply(conversation, model(words), { eventId, transport }),
            ),
          );
          for (const result of results) {
            if (result.status === 'rejected') failures.push(`key ${n}: ${String(result.reason)}`);
            else if (result.value.outcome === 'replayed') replayed += 1;
          }
        }
      }),
    );
    const found = await tally(world, expected);
    const ok = failures.length === 0 && found.lost + found.doubled + found.unmarked === 0;
    const rows: Row[] = [
      {
        measurement: `two concurrent writers per key, ${fmt(size.replies)} keys`,
        result: `${found.lost} lost, ${found.doubled} doubled or interleaved, ${found.unmarked} unmarked cut; ${fmt(replayed)} second writers answered replayed`,
        goal: '0 lost, 0 doubled, 0 unmarked cut',
        status: ok ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `${fmt(size.replies)} keys over ${size.lanes} conversations, two \`messages.reply\` calls of different texts per key at once ` +
        `(seed ${size.seed}): each key must show exactly one message holding one writer's whole text; the other waits and answers it, replayed.`,
      ...failures.slice(0, 10).map((failure) => `- ${failure}`),
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}
