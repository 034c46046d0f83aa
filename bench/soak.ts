// `npm run soak` (the full soak of issue 7) and `npm run soak:ci` (`--ci`, a small one for CI, well
// under a minute): sends under faults, streamed replies cut at random, webhook redeliveries. Prints
// the counts, writes the `soak` section of BENCHMARKS.md (full soak only), exits 1 on any loss or duplicate.
import { join } from 'node:path';
import { progress, ROOT } from './lib/child.js';
import { describeMachine, plainTable, type Row, summaryTable, writeSection } from './lib/report.js';
import { soakReplies } from './soak/replies.js';
import { soakModelFailures, soakTwoWriters } from './soak/reply-outcomes.js';
import { soakSends } from './soak/sends.js';
import { soakPausedWriter, soakPoison } from './soak/stuck-runs.js';
import { soakWebhooks } from './soak/webhooks.js';

const ci = process.argv.includes('--ci');
const seed = Number(process.env.SOAK_SEED ?? 7);
const sizes = ci
  ? { sends: 200, sendLanes: 10, replies: 30, webhooks: 50, poison: 40, paused: 10 }
  : { sends: 1000, sendLanes: 20, replies: 100, webhooks: 200, poison: 200, paused: 30 };

const machine = describeMachine();
const started = performance.now();
const parts = [
  { title: 'Sends under faults', run: () => soakSends({ sends: sizes.sends, lanes: sizes.sendLanes, seed }) },
  {
    title: 'Streamed replies cut at random',
    run: () => soakReplies({ replies: sizes.replies, lanes: 10, seed }),
  },
  {
    title: 'Replies from failing models, then the retry',
    run: () => soakModelFailures({ replies: sizes.replies, lanes: 10, seed }),
  },
  {
    title: 'Two writers per key at once',
    run: () => soakTwoWriters({ replies: sizes.replies, lanes: 10, seed }),
  },
  {
    title: 'Webhook redeliveries',
    run: () => soakWebhooks({ deliveries: sizes.webhooks, conversations: 10, seed }),
  },
  {
    title: 'Poison messages',
    run: () => soakPoison({ messages: sizes.poison, conversations: ci ? 4 : 10, seed }),
  },
  {
    title: 'A paused writer',
    run: () => soakPausedWriter({ messages: sizes.paused, conversations: ci ? 2 : 5, seed }),
  },
  ...(ci
    ? []
    : [
        {
          title: 'Delays beyond the timeout with the default retries (informational)',
          run: () => soakSends({ sends: 100, lanes: 20, seed, delaysWithDefaultRetries: true }),
        },
      ]),
];
const rows: Row[] = [];
const sections: string[] = [];
let ok = true;
for (const part of parts) {
  progress(`soak${ci ? ' (ci)' : ''}: ${part.title.toLowerCase()}`);
  const result = await part.run();
  ok &&= result.ok;
  rows.push(...result.rows);
  sections.push(`### ${part.title}\n\n${result.details.join('\n')}`);
}
const seconds = (performance.now() - started) / 1000;

console.log(
  `\n${machine}\n\n${plainTable(rows)}\n\n${ok ? 'No loss, no duplicate' : 'LOSS OR DUPLICATE'} (${seconds.toFixed(1)} s, seed ${seed}).`,
);
if (!ci) {
  const body = [
    `_Written by \`npm run soak\` (seed ${seed}, ${seconds.toFixed(0)} s)._ Machine: ${machine}.`,
    '',
    summaryTable(rows),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
  writeSection(join(ROOT, 'BENCHMARKS.md'), 'soak', body);
  console.log('Wrote the soak section of BENCHMARKS.md.');
}
process.exitCode = ok ? 0 : 1;
