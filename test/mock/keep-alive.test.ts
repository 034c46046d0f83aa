import { describe, expect, it } from 'vitest';
import { newKey, setupScenario } from './helpers.js';
import { EventReader, jsonStreamingSend, useMockOverLoopback } from './stream-helpers.js';

// A short keep-alive interval, so the idle stream gets its comment quickly.
const ctx = useMockOverLoopback({ keepAliveMs: 20 });

describe('keep-alive', () => {
  it('sends a ": keep-alive" comment while a stream is idle', async () => {
    const s = await setupScenario(ctx.mock, ctx.call);
    const events = new EventReader(
      await jsonStreamingSend(ctx.baseUrl, s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      }),
    );
    await events.waitFor(1);
    expect(await events.waitForComment()).toBe('keep-alive');
    expect(events.events).toHaveLength(1);
    events.cancel();
  });
});
