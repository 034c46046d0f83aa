// Soak part 2: streamed replies whose event stream is cut at a random point (before or after
// message.started) must end with exactly the text written: nothing lost, nothing doubled.
import type { Row } from '../lib/report.js';
import { fmt, seededRandom } from '../lib/stats.js';
import { agentMessages, startWorld, textOf } from '../lib/world.js';

/** How big a run is. */
export interface ReplySoakSize {
  replies: number;
  lanes: number;
  seed: number;
}

const WORDS = [' alpha', ' beta', ' gamma', ' Grüße', ' 世界', ' 🙂', ',', '.', '\n', ' delta'];

/** Runs the replies, each on its own seeded plan, and checks every one in the history. */
export async function soakReplies(size: ReplySoakSize) {
  const world = await startWorld({ users: size.lanes });
  try {
    const random = seededRandom(size.seed);
    const plans = Array.from({ length: size.replies }, (_, n) => ({
      n,
      // Most replies are cut; after_events 0 cuts before message.started, so the start itself is retried.
      cut: random() < 0.85 ? Math.floor(random() * 6) : undefined,
      transport: random() < 0.5 ? ('stream' as const) : ('auto' as const),
      pieces: [
        `[reply ${n}]`,
        ...Array.from(
          { length: 400 + Math.floor(random() * 1100) },
          () => WORDS[Math.floor(random() * WORDS.length)]!,
        ),
      ],
    }));
    const written = new Map<string, string>();
    const failures: string[] = [];
    let recovered = 0;
    const started = performance.now();
    await Promise.all(
      world.conversations.map(async (conversation, lane) => {
        const path = `/v1/conversations/${conversation}/messages`;
        for (let n = lane; n < size.replies; n += size.lanes) {
          const plan = plans[n]!;
          if (plan.cut !== undefined) {
            world.mock.faults.inject({ method: 'POST', path, fault: 'cut_stream', after_events: plan.cut });
          }
          try {
            const reply = await world.client.messages.startReply(
              conversation,
              {},
              { transport: plan.transport },
            );
            for (const piece of plan.pieces) await reply.write(piece);
            const result = await reply.complete();
            if (reply.transport === 'append') recovered += 1;
            written.set(result.message_id, plan.pieces.join(''));
          } catch (error) {
            failures.push(
              `reply ${n} (cut ${plan.cut ?? 'none'}): ${(error as Error).name}: ${(error as Error).message}`,
            );
          }
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    let stored = 0;
    let exact = 0;
    for (const conversation of world.conversations) {
      for (const message of await agentMessages(world, conversation)) {
        stored += 1;
        if (message.status === 'sent' && textOf(message) === written.get(message.id)) exact += 1;
      }
    }
    const cuts = plans.filter((plan) => plan.cut !== undefined).length;
    const ok = failures.length === 0 && stored === size.replies && exact === size.replies;
    const rows: Row[] = [
      {
        measurement: `streamed replies, ${fmt(cuts)} cut at random`,
        result: `${fmt(exact)}/${fmt(size.replies)} exactly the written text, ${fmt(stored)} messages stored, ${failures.length} failed`,
        goal: `all ${fmt(size.replies)} exact, no extra message`,
        status: ok ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `${fmt(size.replies)} replies (400 to 1,500 writes each, multi-byte text) over ${size.lanes} conversations, ` +
        `half on \`stream\`, half on \`auto\`; ${fmt(cuts)} had their event stream cut after 0 to 5 events ` +
        `(seed ${size.seed}). ${fmt(recovered)} finished on the append endpoint after a cut. ${fmt(seconds, 1)} s.`,
      ...failures.slice(0, 10).map((failure) => `- ${failure}`),
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}
