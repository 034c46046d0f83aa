import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { newKey, setupScenario } from './helpers.js';
import { EventReader, jsonStreamingSend, streamingSend } from './stream-helpers.js';

// A server configured without streamed request bodies.
describe.each(DOORS)('through the %s door', (door) => {
  const ctx = useDoor(door, { streamedBodies: false });

  describe('a mock without streamed bodies', () => {
    it('answers 415 streaming_unsupported to an NDJSON body and still streams the JSON start', async () => {
      const s = await setupScenario(ctx.mock);
      const { response, writer } = await streamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      });
      writer.close();
      expect(response.status).toBe(415);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'streaming_unsupported',
      );
      const fallback = await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      });
      expect(fallback.status).toBe(200);
      const events = new EventReader(fallback);
      await events.waitFor(1);
      events.cancel();
    });

    it('answers 401, not 415, to an NDJSON body without a token', async () => {
      const s = await setupScenario(ctx.mock);
      const { response, writer } = await streamingSend(ctx.baseUrl(), s.conversationId, '', newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      });
      writer.close();
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    });
  });
});
