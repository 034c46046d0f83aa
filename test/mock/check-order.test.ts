// PROTOCOL.md section 2: the checks apply in order, and the first that fails answers:
// authentication (401), shape and limits (400, 413), replay, existence (404), permission (403).
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';
import { streamingSend } from './stream-helpers.js';

const overOneMiB = () => textSend('x'.repeat(1.1 * 1024 * 1024));

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call, baseUrl } = useDoor(door);

  describe('the order of checks', () => {
    it('answers 401, not 413, to a body over 1 MiB without a token', async () => {
      const s = await setupScenario(mock);
      const answer = await call('POST', `/v1/conversations/${s.conversationId}/messages`, {
        idempotencyKey: newKey(),
        body: overOneMiB(),
      });
      expect(answer.status).toBe(401);
      expect(errorOf(answer).code).toBe('unauthorized');
      // Recorded on arrival all the same: the start of the body, with a mark where the log cut it.
      expect(mock.requests.at(-1)?.body).toMatch(
        /^\{.*… \[request log: the first 65536 characters of a more than 1048576-byte body\]$/s,
      );
    });

    it('answers 401, not 413, to a body over 1 MiB with an unknown token', async () => {
      const answer = await call('POST', '/v1/attachments', {
        token: 'ams_sk_00000000000000000000000000000000',
        body: {
          name: 'a.txt',
          mime_type: 'text/plain',
          size_bytes: 1,
          padding: 'x'.repeat(1.1 * 1024 * 1024),
        },
      });
      expect(answer.status).toBe(401);
    });

    it('answers 413 before 404: a body over 1 MiB to a conversation the agent is not in', async () => {
      const s = await setupScenario(mock);
      const answer = await call('POST', '/v1/conversations/cnv_unknown/messages', {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: overOneMiB(),
      });
      expect(answer.status).toBe(413);
      expect(errorOf(answer).code).toBe('payload_too_large');
    });

    it('answers 400 before 404: a bad send to a conversation the agent is not in', async () => {
      const s = await setupScenario(mock);
      const answer = await call('POST', '/v1/conversations/cnv_unknown/messages', {
        token: s.apiKey,
        idempotencyKey: newKey(),
        body: { schema: 'svc.agent-send.v1' },
      });
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toContain('content');
    });

    it('answers 401, not 415, to a streamed body without a token while streamed bodies are refused', async () => {
      const s = await setupScenario(mock);
      mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'refuse_streamed_body', times: 2 });
      const anonymous = await streamingSend(baseUrl(), s.conversationId, '', newKey(), textSend('hi'));
      anonymous.writer.close();
      expect(anonymous.response.status).toBe(401);
      expect(((await anonymous.response.json()) as { error: { code: string } }).error.code).toBe(
        'unauthorized',
      );
      // With a token, the same request meets the refusal.
      const signed = await streamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), textSend('hi'));
      signed.writer.close();
      expect(signed.response.status).toBe(415);
      expect(((await signed.response.json()) as { error: { code: string } }).error.code).toBe(
        'streaming_unsupported',
      );
    });
  });
});
