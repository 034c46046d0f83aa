// The questions part of the cluster soak: each of N new users is asked one question (the bots'
// `soak-confirm`, `ctx.ask` with a quick reply, timing out after SOAK_QUESTION_TIMEOUT_MS) while a
// random bot is SIGKILLed now and then. Half the users click the answer at a random time before the
// deadline; the others never answer, so their question must time out, by the bots' own timers. Each
// question must end exactly once, seen from the user: one `answered qN` or one `timed out qN` reply,
// never both, never two; an unanswered one must time out. The mock's retry schedule runs in real time:
// a question whose ask only the 5-minute retry ran (its first two attempts failed) is counted as
// such; so is one whose ask a bot gave up after maxAttempts failed runs and reported (its bot logs
// `given up`). Only a question still without an end after that retry, and not reported, is lost.
import type { Row } from '../lib/report.js';
import { fmt } from '../lib/stats.js';
import { agentMessages, textOf, type World } from '../lib/world.js';
import type { LogEntry } from './bots.js';
import { settle } from './settle.js';

/** What the part needs from the soak. */
export interface QuestionSoakInput {
  world: World;
  random: () => number;
  questions: number;
  kills: number;
  killEveryMs: number;
  /** The bots' question timeout (their SOAK_QUESTION_TIMEOUT_MS). */
  timeoutMs: number;
  /** SIGKILLs a random bot and starts another in its place; false when none was running. */
  killOne(): Promise<boolean>;
  /** Reads the bots' store, to say where a lost question stopped. */
  reader: { get(key: string): Promise<string | null> };
  /** What the network saw: each first delivery's fate, the event that delivered each user message's text. */
  network: { fates: ReadonlyMap<string, string>; eventOf: ReadonlyMap<string, string> };
  /** Every line the bots logged: a `given up` names the delivery of a message a bot stopped trying. */
  log: readonly LogEntry[];
  prefix: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the questions part; answers its rows and details. */
export async function soakQuestions(input: QuestionSoakInput) {
  const { world, random, questions } = input;
  const users: { userId: string; conversationId: string }[] = [];
  for (let i = 0; i < questions; i++) {
    const { user } = world.mock.createUser({ display_name: `Asked ${i}` });
    const { conversation_id } = world.mock.installAgent({ user_id: user.id, agent_id: world.agentId });
    users.push({ userId: user.id, conversationId: conversation_id });
  }
  const answering = new Set(users.map((_, i) => i).filter((i) => i % 2 === 0));

  // What the user sees: the question messages and the end replies, as the mock creates them.
  const asked = new Map<number, string>();
  const ends = new Map<number, string[]>();
  const clicks: Promise<void>[] = [];
  const stop = world.mock.events.subscribe((event) => {
    if (event.type !== 'message.created') return;
    const message = (
      event as { message: { id: string; sender: { id: string }; parts?: { type: string; text?: string }[] } }
    ).message;
    if (message.sender.id !== world.agentId) return;
    const text = textOf(message) ?? '';
    const match = /^(question|answered|timed out) q(\d+)$/.exec(text);
    if (!match) return;
    const q = Number(match[2]);
    if (match[1] !== 'question') {
      ends.set(q, [...(ends.get(q) ?? []), match[1] as string]);
      return;
    }
    if (asked.has(q)) return;
    asked.set(q, message.id);
    if (!answering.has(q)) return;
    // Clicked a random time after the question appeared, at least a second and a half before its deadline.
    const after = 300 + random() * Math.max(input.timeoutMs - 1800, 0);
    clicks.push(
      sleep(after).then(() => {
        const user = users[q];
        if (!user) return;
        world.mock.clickAction({
          conversation_id: user.conversationId,
          user_id: user.userId,
          message_id: message.id,
          action_id: 'yes',
        });
      }),
    );
  });

  const started = performance.now();
  let kills = 0;
  const chaos = (async () => {
    while (kills < input.kills) {
      await sleep(input.killEveryMs);
      if (await input.killOne()) kills++;
    }
  })();
  for (let i = 0; i < questions; i++) {
    const user = users[i];
    if (!user) continue;
    world.mock.postUserMessage(user.conversationId, { user_id: user.userId, text: `ask q${i}` });
    if (i % 20 === 19) await sleep(100);
  }
  await chaos;
  // Settled once every question ended, as the messages part settles (settle.ts): an ask whose first
  // two attempts failed waits for the service's 5-minute retry, which the mock's clock is moved on to
  // once nothing moved for a while; those are counted, and a question still without an end is lost.
  const asks = new Map([...input.network.eventOf].filter(([text]) => /^ask q\d+$/.test(text)));
  const { waited } = await settle({
    world,
    eventOf: asks,
    check: async () => ({
      settled: users.every((_, q) => ends.has(q)),
      progressKey: [asked.size, [...ends.values()].flat().length, world.mock.deliveries.length],
      answeredTexts: new Set([...asked.keys()].map((q) => `ask q${q}`)),
    }),
    // Longer than a question's timeout and a tick of the bots' timers: a question asked meanwhile ends.
    quietMs: input.timeoutMs + 6000,
    limitMs: 120_000,
  });
  const askedLate = new Set(
    waited
      .flatMap(({ texts }) => texts)
      .map((text) => Number(text.slice('ask q'.length)))
      .filter((q) => asked.has(q)),
  );
  await Promise.all(clicks);
  await sleep(input.timeoutMs); // a late second end would show by now
  stop();
  const seconds = (performance.now() - started) / 1000;

  // An ask a bot gave up (its runs failed maxAttempts times) was reported, not lost.
  const givenUpIds = new Set(input.log.filter((e) => e.event === 'given up').map((e) => e.webhookId));
  const givenUp = new Set(
    users.map((_, q) => q).filter((q) => givenUpIds.has(input.network.eventOf.get(`ask q${q}`))),
  );
  let answered = 0;
  let timedOut = 0;
  let lost = 0;
  let doubled = 0;
  let unansweredButAnswered = 0;
  let answeredButTimedOut = 0;
  for (let q = 0; q < questions; q++) {
    const seen = ends.get(q) ?? [];
    if (seen.length === 0 && !givenUp.has(q)) lost++;
    if (seen.length > 1) doubled++;
    if (seen.length !== 1) continue;
    if (seen[0] === 'answered') answered++;
    else timedOut++;
    if (!answering.has(q) && seen[0] === 'answered') unansweredButAnswered++;
    if (answering.has(q) && seen[0] === 'timed out') answeredButTimedOut++;
  }
  const ok = lost === 0 && doubled === 0 && unansweredButAnswered === 0;
  // Where a question stopped: how its ask was delivered and what the agent posted (a question never
  // asked is an ask no delivery ran to its end, or one posted and never seen), and its stored record.
  const describe = async (q: number) => {
    const seen = ends.get(q) ?? [];
    const user = users[q];
    const question = await input.reader.get(`${input.prefix}k:question:${user?.conversationId}`);
    const event = input.network.eventOf.get(`ask q${q}`);
    const attempts = world.mock.deliveries
      .filter((d) => d.event_id === event)
      .map((d) => `${d.attempt}:${d.status ?? d.error ?? '-'}`);
    const posted = user ? await agentMessages(world, user.conversationId) : [];
    return (
      `q${q}: ${seen.length} ends (${seen.join(', ')}), ${asked.has(q) ? 'asked' : 'never asked'}, ` +
      `${answering.has(q) ? 'clicked' : 'not clicked'}${givenUp.has(q) ? ', its ask given up (reported)' : ''}; ` +
      `ask ${event ?? 'never delivered'} (first delivery ` +
      `${input.network.fates.get(event ?? '') ?? '?'}, attempts ${attempts.join(' ') || 'none'}); agent ` +
      `posted ${posted.map((m) => `${JSON.stringify(textOf(m))} ${m.status}`).join(', ') || 'nothing'}; ` +
      `stored question ${question ?? 'none'}`
    );
  };
  const problems: string[] = [];
  for (let q = 0; q < questions; q++) {
    if ((ends.get(q) ?? []).length !== 1) problems.push(`- ${await describe(q)}`);
  }
  for (const q of [...askedLate].slice(0, 10)) {
    problems.push(`- asked only by the 5-minute retry or later: ${await describe(q)}`);
  }
  const rows: Row[] = [
    {
      measurement: `cluster: questions that ended exactly once, answered or timed out (${kills} kills)`,
      result: `${fmt(answered + timedOut)}/${fmt(questions)} (${lost} lost, ${doubled} doubled)`,
      goal: `${fmt(questions)}/${fmt(questions)}`,
      status: lost === 0 && doubled === 0 ? 'met' : 'NOT MET',
    },
    {
      measurement: 'cluster: questions answered / timed out (half clicked before the deadline, half never)',
      result: `${answered} / ${timedOut} (${answeredButTimedOut} clicked but timed out; ${unansweredButAnswered} never clicked but answered)`,
      goal: `0 never clicked but answered`,
      status: unansweredButAnswered === 0 ? 'met' : 'NOT MET',
    },
    {
      measurement:
        'cluster: questions whose ask only the 5-minute retry ran (the mock clock runs in real time)',
      result: `${askedLate.size}`,
      goal: 'info: both first attempts of its ask failed (a kill, a stopped run)',
      status: 'info',
    },
    {
      measurement: 'cluster: questions whose ask a bot gave up after maxAttempts failed runs (reported)',
      result: `${givenUp.size}`,
      goal: 'info: reported by MessageGivenUpError, not lost',
      status: 'info',
    },
  ];
  const details = [
    `${fmt(questions)} questions, one per new user, each asked by \`ctx.ask\` with a quick reply and a ` +
      `${fmt(input.timeoutMs / 1000, 1)} s timeout, on the same 3 bot processes and faulty network; ` +
      `${kills} more SIGKILLs during this part. ${answering.size} users click the answer at a random time ` +
      `at least 1.5 s before the deadline (a click whose delivery reached no live bot in time may lose to ` +
      `the timeout: counted above); the others never answer. Ends counted from the replies the user ` +
      `sees (${fmt(seconds, 1)} s).`,
    ...problems.slice(0, 20),
  ];
  return { ok, rows, details };
}
