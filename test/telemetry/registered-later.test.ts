// An app may register the OpenTelemetry SDK after its bot was made (or the API may be installed and
// never registered): a delivery is traced and counted from the first one after the registration, and
// nothing before it, since without a provider the bot makes no span and records no metric.
import { afterAll, describe, expect, test } from 'vitest';
import { createLoop } from '../webhooks/harness.js';
import { registerOtel } from './otel.js';

describe('OpenTelemetry registered after the bot was made', () => {
  let otel: ReturnType<typeof registerOtel> | undefined;
  afterAll(() => otel?.shutdown());

  test('the deliveries after the registration get their spans and metrics, the one before none', async () => {
    const loop = await createLoop();
    loop.bot.on('message.received', (ctx) => ctx.reply('ok'));
    await loop.post('before');
    await loop.bot.idle();

    otel = registerOtel();
    await loop.post('after');
    await loop.bot.idle();

    const spans = await otel.spans();
    const deliveries = spans.filter((span) => span.name === 'agent-messaging.delivery');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.attributes['agent_messaging.outcome']).toBe('ran');
    expect(spans.filter((span) => span.name === 'agent-messaging.reply')).toHaveLength(1);
    expect(otel.open()).toEqual([]);
    // Counted once: the delivery before the registration was not recorded anywhere.
    const counted = await otel.metric('agent_messaging.deliveries');
    expect(
      counted.filter((point) => point.attributes['agent_messaging.event.type'] === 'message.received'),
    ).toEqual([
      {
        value: 1,
        attributes: { 'agent_messaging.outcome': 'ran', 'agent_messaging.event.type': 'message.received' },
      },
    ]);
  });
});
