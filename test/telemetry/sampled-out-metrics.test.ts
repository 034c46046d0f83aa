// Metrics count every delivery, not only the traced ones: with a sampler that drops every trace (as a
// ratio sampler drops most), no span is made, and the deliveries, the turn wait, the handler duration
// and the replies are all recorded all the same.
import { AlwaysOffSampler } from '@opentelemetry/sdk-trace';
import { afterAll, expect, test } from 'vitest';
import { createLoop } from '../webhooks/harness.js';
import { registerOtel } from './otel.js';

const otel = registerOtel(new AlwaysOffSampler());
afterAll(() => otel.shutdown());

/** How many values each metric of NAMES has recorded (a counter's sum, a histogram's count). */
async function recorded(): Promise<number[]> {
  const counts: number[] = [];
  // One at a time: reading a metric empties the exporter.
  for (const name of NAMES) {
    const points = await otel.metric(name);
    counts.push(
      points.reduce<number>(
        (sum, { value }) => sum + (typeof value === 'number' ? value : (value as { count: number }).count),
        0,
      ),
    );
  }
  return counts;
}

const NAMES = ['deliveries', 'turn.wait', 'handler.duration', 'replies'].map(
  (name) => `agent_messaging.${name}`,
);

test('a delivery sampled out makes no span and is counted in every metric', async () => {
  const loop = await createLoop();
  loop.bot.on('message.received', (ctx) => ctx.reply('ok'));
  // What the loop's own set-up recorded (its test webhook), before the message.
  const before = await recorded();
  await loop.post('hi');
  await loop.bot.idle();

  expect(await otel.spans()).toEqual([]);
  const after = await recorded();
  expect(after.map((value, i) => value - before[i]!)).toEqual([1, 1, 1, 1]);
  expect(await otel.metric('agent_messaging.replies')).toEqual([
    {
      value: 1,
      attributes: { 'agent_messaging.reply.outcome': 'complete', 'agent_messaging.reply.transport': 'send' },
    },
  ]);
});
