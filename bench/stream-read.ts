// Measurement 2: events/s and MB/s of `for await` over a 20 MB recorded stream, through the public
// client (its fetch option hands back the recording), against eventsource-parser's feed() and
// JSON.parse over the same chunks.
import { createParser } from 'eventsource-parser';
import { AgentClient } from '../src/index.js';
import { progress, runAsChild } from './lib/child.js';
import { bodyOf, type Recording, recordStream } from './lib/recorded-stream.js';
import { markdownTable, type Outcome, type Row } from './lib/report.js';
import { fmt, median } from './lib/stats.js';

const MB = 1024 * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SIZE = 20 * MB;

/** The SDK's reader: `for await` over `client.messages.stream()`; answers events and text seen. */
export async function readWithSdk(recording: Recording): Promise<{ events: number; chars: number }> {
  const fetch = async () =>
    new Response(bodyOf(recording.chunks), { status: 200, headers: { 'content-type': 'text/event-stream' } });
  const client = new AgentClient({ apiKey: 'ams_sk_bench', baseUrl: 'http://ams.bench', fetch });
  const stream = await client.messages.stream('cnv_bench');
  let events = 0;
  let chars = 0;
  for await (const event of stream) {
    events += 1;
    if (event.type === 'message.patch') chars += event.patch.value.length;
  }
  return { events, chars };
}

/** The floor: the parser's feed() over the body reader, and JSON.parse of each data field. */
async function readRaw(recording: Recording): Promise<{ events: number; chars: number }> {
  let events = 0;
  let chars = 0;
  const parser = createParser({
    onEvent: (message) => {
      const data = JSON.parse(message.data) as { type: string; patch?: { value: string } };
      events += 1;
      if (data.type === 'message.patch') chars += data.patch!.value.length;
    },
  });
  const reader = bodyOf(recording.chunks).getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  parser.feed(decoder.decode());
  return { events, chars };
}

async function timed(
  read: (r: Recording) => Promise<{ events: number; chars: number }>,
  recording: Recording,
) {
  // CPU time, not wall time: the machine is shared, and reading from memory never waits on anything.
  const started = process.cpuUsage();
  const seen = await read(recording);
  const used = process.cpuUsage(started);
  const seconds = (used.user + used.system) / 1e6;
  if (seen.events !== recording.events || seen.chars !== recording.text.length) {
    throw new Error(
      `read ${seen.events} events / ${seen.chars} chars, recorded ${recording.events} / ${recording.text.length}`,
    );
  }
  return seconds;
}

/** Both readers over a token-sized and a batch-sized recording, rounds interleaved. */
export async function measureStreamRead(): Promise<Outcome> {
  const rows: Row[] = [];
  const lines: string[][] = [];
  for (const patch of ['token', 'batch'] as const) {
    const recording = recordStream({ bytes: SIZE, patch });
    const sdk: number[] = [];
    const raw: number[] = [];
    await timed(readWithSdk, recording);
    await timed(readRaw, recording);
    for (let round = 0; round < ROUNDS; round++) {
      progress(`stream-read (${patch} patches): round ${round + 1}/${ROUNDS}`);
      sdk.push(await timed(readWithSdk, recording));
      raw.push(await timed(readRaw, recording));
    }
    const mb = recording.bytes / MB;
    const [sdkS, rawS] = [median(sdk), median(raw)];
    // The ratio within each round (the two reads ran back to back), then the median.
    const share = median(sdk.map((seconds, i) => raw[i]! / seconds));
    const label = patch === 'token' ? 'token-sized patches' : '256-character patches';
    rows.push({
      measurement: `2. stream read, ${label}`,
      result: `${fmt(recording.events / sdkS)} events/s, ${fmt(mb / sdkS, 1)} MB/s: ${fmt(share, 2)}x raw parser`,
      goal: '>= 0.8x raw parser',
      status: share >= 0.8 ? 'met' : 'NOT MET',
    });
    for (const [name, seconds] of [
      ['SDK `for await`', sdkS],
      ['eventsource-parser feed() + JSON.parse', rawS],
    ] as const) {
      lines.push([
        label,
        name,
        fmt(recording.events),
        fmt(mb, 1),
        fmt(seconds * 1000),
        fmt(recording.events / seconds),
        fmt(mb / seconds, 1),
      ]);
    }
  }
  const details = [
    `Median of ${ROUNDS} reads of each recording (16 KiB chunks, in memory, so only parsing is timed), in ` +
      'CPU time of the process (per CPU-second: steady on a shared machine, and reading never waits). ' +
      'The SDK reads through `client.messages.stream()` with a `fetch` option answering the recording; ' +
      'both readers check the event count and the appended text.',
    '',
    markdownTable(['Recording', 'Reader', 'Events', 'MB', 'ms', 'events/s', 'MB/s'], lines),
  ];
  return { rows, details };
}

runAsChild(import.meta.url, measureStreamRead);
