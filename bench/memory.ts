// Measurement 6: heap over 1,000,000 stream events. The events are made on the fly (nothing is held
// by the source) and read with `for await` through the public client; the heap is sampled after a
// forced GC (`--expose-gc`) every 50,000 events.
import { AgentClient } from '../src/index.js';
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome, type Row } from './lib/report.js';
import { fmt, slope } from './lib/stats.js';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const SAMPLE_EVERY = 50_000;
const MB = 1024 * 1024;
const encoder = new TextEncoder();
const WORDS = [' the', ' weather', ' is', ' sunny', ' in', ' Zürich', ',', ' 21', '°C', '.'];

/** An endless-looking SSE body for one message of `events` events, made 64 events per pull. */
function generatedBody(messageNumber: number, events: number): ReadableStream<Uint8Array> {
  const messageId = `msg_mem${String(messageNumber).padStart(16, '0')}`;
  const blockId = `blk_mem${String(messageNumber).padStart(16, '0')}`;
  let seq = 0;
  const line = (type: string, fields: Record<string, unknown>) => {
    seq += 1;
    const data = {
      schema: 'svc.event.v1',
      eventId: `evt_${messageNumber}_${seq}`,
      conversationId: 'cnv_mem',
      type,
      seq,
      ...fields,
    };
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  };
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      let text = '';
      for (let i = 0; i < 64 && seq < events; i++) {
        if (seq === 0)
          text += line('message.started', {
            message: { id: messageId, content: [{ id: blockId, type: 'text', text: '' }] },
          });
        else if (seq === events - 1) text += line('message.completed', { messageId });
        else
          text += line('message.patch', {
            messageId,
            patch: { op: 'appendText', blockId, path: '/text', value: WORDS[seq % WORDS.length] },
          });
      }
      if (text === '') controller.close();
      else controller.enqueue(encoder.encode(text));
    },
  });
}

// GC, then let the event loop turn: undici frees each request's abort wiring from a
// FinalizationRegistry callback, which only runs between tasks (an in-memory fetch never yields one).
async function heapMb(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return process.memoryUsage().heapUsed / MB;
}

interface Scenario {
  label: string;
  streams: number;
  eventsPerStream: number;
}

/** Reads `streams` messages of `eventsPerStream` events one after another; heap samples along the way. */
async function run({ streams, eventsPerStream }: Scenario, label: string) {
  let next = 0;
  const fetch = async () =>
    new Response(generatedBody(next++, eventsPerStream), {
      headers: { 'content-type': 'text/event-stream' },
    });
  const client = new AgentClient({ apiKey: 'ams_sk_mem', baseUrl: 'http://ams.bench', fetch });
  const samples: { x: number; y: number }[] = [];
  let events = 0;
  let chars = 0;
  for (let s = 0; s < streams; s++) {
    const stream = await client.messages.stream('cnv_mem');
    for await (const event of stream) {
      events += 1;
      if (event.type === 'message.patch') chars += event.patch.value.length;
      if (events % SAMPLE_EVERY === 0) {
        samples.push({ x: events, y: await heapMb() });
        if (events % (SAMPLE_EVERY * 4) === 0) progress(`memory (${label}): ${fmt(events)} events`);
      }
    }
  }
  return { events, chars, samples };
}

/** Both shapes of a million events: many realistic messages, and one message that never ends. */
export async function measureMemory(): Promise<Outcome> {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
  const scenarios: Scenario[] = [
    { label: `${fmt(TOTAL / 1000)} messages of 1,000 events`, streams: TOTAL / 1000, eventsPerStream: 1000 },
    { label: `one message of ${fmt(TOTAL)} events`, streams: 1, eventsPerStream: TOTAL },
  ];
  const rows: Row[] = [];
  const lines: string[][] = [];
  for (const scenario of scenarios) {
    const start = await heapMb();
    const { events, chars, samples } = await run(scenario, scenario.label);
    const first = samples[1]?.y ?? start;
    const last = samples.at(-1)!.y;
    const perMillion = slope(samples.slice(1)) * 1_000_000;
    lines.push([
      scenario.label,
      fmt(events),
      fmt(first, 1),
      fmt(last, 1),
      fmt(Math.max(...samples.map((s) => s.y)), 1),
      fmt(perMillion, 1),
      fmt(chars / MB, 1),
    ]);
    const flat = scenario.streams > 1;
    rows.push({
      measurement: `6. heap, ${scenario.label}`,
      result: `${fmt(first, 1)} MB after 100k events, ${fmt(last, 1)} MB after ${fmt(events)} (slope ${fmt(perMillion, 1)} MB per million)`,
      goal: flat ? 'flat (< 2 MB per million events)' : 'only the message text grows',
      status: flat ? (perMillion < 2 ? 'met' : 'NOT MET') : 'info',
    });
  }
  const details = [
    `Heap used after a forced GC, sampled every ${fmt(SAMPLE_EVERY)} events (the first sample skipped as warm-up); ` +
      'slope by least squares. Events are generated as they are pulled, so only the reader can hold memory.',
    '',
    markdownTable(
      [
        'Scenario',
        'Events',
        'Heap at 100k (MB)',
        'Heap at end (MB)',
        'Peak (MB)',
        'Slope (MB/million)',
        'Text appended (MB of chars)',
      ],
      lines,
    ),
  ];
  return { rows, details };
}

runAsChild(import.meta.url, measureMemory);
