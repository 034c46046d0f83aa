// `npm run bench`: the measurements of issues 7 and 17, each in a fresh process, one after another
// (the machine is shared: nothing runs in parallel). Prints the table, profiles every missed goal,
// and writes the `bench` section of BENCHMARKS.md.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR } from './lib/build.js';
import { progress, ROOT, runChild } from './lib/child.js';
import { describeMachine, type Outcome, plainTable, summaryTable, writeSection } from './lib/report.js';
import { profile, profileProcess } from './profile.js';

interface Measurement {
  title: string;
  script: string;
  nodeFlags?: string[];
  args?: string[];
  /** Where the time goes, when a goal of this measurement is missed. */
  profile?: () => Promise<string[]>;
}

const sdkImport = () =>
  `const { AgentClient } = await import(${JSON.stringify(pathToFileURL(join(BUILD_DIR, 'index.js')).href)}); new AgentClient({ apiKey: 'ams_sk_cold', baseUrl: 'http://127.0.0.1:9' });`;

const MEASUREMENTS: Measurement[] = [
  { title: '1. Send-call client CPU', script: 'send-cpu.ts', profile: () => profile('send') },
  { title: '2. Stream reading', script: 'stream-read.ts', profile: () => profile('stream-read') },
  { title: '3. Streamed replies', script: 'reply-requests.ts' },
  { title: '3b. Time to first token', script: 'first-token.ts' },
  {
    title: '4. Cold start',
    script: 'cold-start.ts',
    profile: () =>
      profileProcess(
        ['--cpu-prof-interval=100', '--input-type=module', '-e', sdkImport()],
        'import and construct',
      ),
  },
  { title: '5. Bundle size', script: 'bundle-size.mjs', args: ['--outcome'] },
  { title: '6. Memory', script: 'memory.ts', nodeFlags: ['--expose-gc'] },
  { title: '7. Mock scale', script: 'mock-scale.ts' },
  { title: '8. Conversation order', script: 'bot-concurrency.ts' },
  { title: '9. Bot store on Redis', script: 'store-redis.ts' },
  { title: '10. Webhook intake', script: 'webhook-intake.ts' },
  { title: "11. The mock's loopback door", script: 'mock-door.ts' },
  { title: '12. Telemetry', script: 'telemetry-cost.ts', nodeFlags: ['--expose-gc'] },
];

const only = process.argv.slice(2);
const machine = describeMachine();
const sections: string[] = [];
const rows: Outcome['rows'] = [];
for (const measurement of MEASUREMENTS) {
  if (only.length > 0 && !only.some((name) => measurement.script.startsWith(name))) continue;
  progress(`\n== ${measurement.title} (bench/${measurement.script})`);
  const outcome = await runChild(measurement.script, measurement);
  rows.push(...outcome.rows);
  progress(plainTable(outcome.rows));
  const details = [...outcome.details];
  if (measurement.profile && outcome.rows.some((row) => row.status === 'NOT MET')) {
    progress(`   a goal is missed: profiling`);
    details.push('', ...(await measurement.profile()));
  }
  sections.push(`### ${measurement.title}\n\n${details.join('\n')}`);
}

console.log(`\n${machine}\n\n${plainTable(rows)}`);
if (only.length === 0) {
  const body = [
    `_Written by \`npm run bench\`._ Machine: ${machine}.`,
    '',
    summaryTable(rows),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
  writeSection(join(ROOT, 'BENCHMARKS.md'), 'bench', body);
  console.log('\nWrote the bench section of BENCHMARKS.md.');
} else {
  console.log('\n(A partial run: BENCHMARKS.md left as it is.)');
}
