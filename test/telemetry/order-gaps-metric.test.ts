// The order.gaps counter on the real OpenTelemetry SDK (docs/bot.md "Order with gaps"): a missing
// predecessor that came within gapWaitMs counts `arrived`, one waited for until the bound `given_up`.
import { afterAll, expect, test, vi } from 'vitest';
import { createLoop, failDeliveries, historyReads } from '../webhooks/harness.js';
import { registerOtel } from './otel.js';

const otel = registerOtel();
afterAll(() => otel.shutdown());

/** A bot that echoes, whose deliveries of a text in `failing` get a 502, after a first message and its reply. */
async function echoing(gapWaitMs: number) {
  const loop = await createLoop({ gapWaitMs, ack: 'immediately' });
  const failing = failDeliveries(loop);
  loop.bot.on('message.received', (ctx) => ctx.reply(`Echo: ${ctx.text}`));
  await loop.post('one');
  await loop.bot.idle();
  return { loop, failing };
}

test('a gap filled in time counts as arrived, one waited for until gapWaitMs as given_up', async () => {
  const late = await echoing(1500);
  late.failing.add('two');
  await late.loop.post('two');
  await late.loop.post('three');
  await late.loop.bot.idle(); // 'three' ran once the 1.5 s were up

  const timely = await echoing(60_000);
  timely.failing.add('two');
  await timely.loop.post('two');
  await timely.loop.post('three');
  await vi.waitFor(() => expect(historyReads(timely.loop)).toHaveLength(1), { timeout: 10_000 });
  timely.failing.clear();
  await timely.loop.mock.clock.advance(6);
  await timely.loop.mock.idle();
  await timely.loop.bot.idle();

  const gaps = await otel.metric('agent_messaging.order.gaps');
  expect(gaps).toEqual(
    expect.arrayContaining([
      { value: 1, attributes: { 'agent_messaging.outcome': 'given_up' } },
      { value: 1, attributes: { 'agent_messaging.outcome': 'arrived' } },
    ]),
  );
  expect(gaps).toHaveLength(2);
});
