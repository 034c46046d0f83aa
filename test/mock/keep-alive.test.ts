import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { newKey, setupScenario } from './helpers.js';
import { EventReader, jsonStreamingSend } from './stream-helpers.js';

// A short keep-alive interval, so the idle stream gets its comment quickly.
describe.each(DOORS)('through the %s door', (door) => {
  const ctx = useDoor(door, { keepAliveMs: 20 });

  describe('keep-alive', () => {
    it('sends a ": keep-alive" comment while a stream is idle', async () => {
      const s = await setupScenario(ctx.mock);
      const events = new EventReader(
        await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), {
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
});
