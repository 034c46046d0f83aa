// Measurement 2: events/s and MB/s of `for await` over a 20 MB recorded stream, through the public
// client (its fetch option hands back the recording), against eventsource-parser's feed() and
// JSON.parse over the same chunks.
import { createParser } from 'eventsource-parser';
import { AgentClient } from '../src/index.js';
import { parseStreamEvent } from '../src/schemas/stream.js';
import { EventIterator } from '../src/streaming/event-iterator.js';
import { readStreamEventBatches } from '../src/streaming/sse-reader.js';
import type { StreamedMessageBuilder } from '../src/streaming/streamed-message.js';
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

type Reader = (recording: Recording) => Promise<{ events: number; chars: number }>;

/** `for await` over any iterable of stream events, counting them and their text. */
async function countEvents(events: AsyncIterable<{ type: string }>) {
  let count = 0;
  let chars = 0;
  for await (const event of events) {
    count += 1;
    if (event.type === 'message.patch')
      chars += (event as unknown as { patch: { value: string } }).patch.value.length;
  }
  return { events: count, chars };
}

/** The floor: the parser's feed() over the body reader, and JSON.parse of each data field. */
const readRaw: Reader = (recording) => readParsed(recording, false);

/** Where the time goes, step by step: the floor plus the SDK's zod check of each event. */
const readRawWithZod: Reader = (recording) => readParsed(recording, true);

async function readParsed(
  recording: Recording,
  validate: boolean,
): Promise<{ events: number; chars: number }> {
  let events = 0;
  let chars = 0;
  const parser = createParser({
    onEvent: (message) => {
      const data = JSON.parse(message.data) as { type: string; patch?: { value: string } };
      if (validate && !parseStreamEvent(data).success) throw new Error('malformed event');
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

/** The ceiling of any `for await` API: the floor's events handed out through one async generator. */
async function* floorEvents(recording: Recording): AsyncGenerator<{ type: string }> {
  let batch: { type: string }[] = [];
  const parser = createParser({
    onEvent: (message) => {
      batch.push(JSON.parse(message.data) as { type: string });
    },
  });
  const reader = bodyOf(recording.chunks).getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
    const ready = batch;
    batch = [];
    yield* ready;
    if (done) return;
  }
}

const readFloorGenerator: Reader = (recording) => countEvents(floorEvents(recording));

/** The SDK's reader without MessageStream around it: its batches flattened by one more async generator. */
async function* sdkEvents(recording: Recording): AsyncGenerator<{ type: string }> {
  for await (const batch of readStreamEventBatches(bodyOf(recording.chunks))) yield* batch;
}

const readSdkGenerator: Reader = (recording) => countEvents(sdkEvents(recording));

/** A builder that accepts every event and keeps nothing: the iterator's own cost, without the message. */
const acceptAll = {
  apply: () => true,
  snapshot: () => ({ completed: true }),
} as unknown as StreamedMessageBuilder;

/** The SDK's reader and event iterator as MessageStream uses them, with no message built (no checks, no text). */
const readSdkIterator: Reader = (recording) =>
  countEvents(new EventIterator(readStreamEventBatches(bodyOf(recording.chunks)), acceptAll, () => {}));

async function timed(read: Reader, recording: Recording) {
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

/** The readers timed on each recording: the goal's two, then the steps between them. */
const READERS: { name: string; read: Reader }[] = [
  { name: 'SDK `for await` over `client.messages.stream()`', read: readWithSdk },
  { name: 'eventsource-parser feed() + JSON.parse (the floor)', read: readRaw },
  {
    name: 'step: the floor, handed out by one async generator (no checks)',
    read: readFloorGenerator,
  },
  { name: 'step: the floor + the zod check of each event', read: readRawWithZod },
  { name: 'step: the SDK reader without MessageStream (one generator)', read: readSdkGenerator },
  {
    name: "step: the SDK reader and MessageStream's iterator, no message built (no order checks, no text)",
    read: readSdkIterator,
  },
];

/** Every reader over a token-sized and a batch-sized recording, rounds interleaved. */
export async function measureStreamRead(): Promise<Outcome> {
  const rows: Row[] = [];
  const lines: string[][] = [];
  for (const patch of ['token', 'batch'] as const) {
    const recording = recordStream({ bytes: SIZE, patch });
    const samples = READERS.map(() => [] as number[]);
    for (const reader of READERS) await timed(reader.read, recording);
    for (let round = 0; round < ROUNDS; round++) {
      progress(`stream-read (${patch} patches): round ${round + 1}/${ROUNDS}`);
      for (const [i, reader] of READERS.entries()) samples[i]!.push(await timed(reader.read, recording));
    }
    const mb = recording.bytes / MB;
    const raw = samples[1]!;
    // Each reader's share of the floor's speed within each round (back to back), then the median.
    const share = (i: number) => median(samples[i]!.map((seconds, round) => raw[round]! / seconds));
    const sdkS = median(samples[0]!);
    const label = patch === 'token' ? 'token-sized patches' : '256-character patches';
    rows.push({
      measurement: `2. stream read, ${label}`,
      result: `${fmt(recording.events / sdkS)} events/s, ${fmt(mb / sdkS, 1)} MB/s: ${fmt(share(0), 2)}x raw parser`,
      goal: '>= 0.8x raw parser',
      status: share(0) >= 0.8 ? 'met' : 'NOT MET',
    });
    for (const [i, reader] of READERS.entries()) {
      const seconds = median(samples[i]!);
      lines.push([
        label,
        reader.name,
        fmt(recording.events),
        fmt(mb, 1),
        fmt(seconds * 1000),
        fmt(recording.events / seconds),
        fmt(mb / seconds, 1),
        `${fmt(share(i), 2)}x`,
      ]);
    }
  }
  const details = [
    `Median of ${ROUNDS} reads of each recording (16 KiB chunks, in memory, so only parsing is timed), in ` +
      'CPU time of the process (per CPU-second: steady on a shared machine, and reading never waits); the ' +
      'share of the floor is taken within each round. The SDK reads through `client.messages.stream()` with a ' +
      '`fetch` option answering the recording; every reader checks the event count and the appended text. ' +
      'The `step` rows take the SDK apart.',
    '',
    markdownTable(['Recording', 'Reader', 'Events', 'MB', 'CPU ms', 'events/s', 'MB/s', 'vs floor'], lines),
  ];
  return { rows, details };
}

runAsChild(import.meta.url, measureStreamRead);
