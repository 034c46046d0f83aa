import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { CreateDirectResponse, RetrieveConversationResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);

  describe('conversations.retrieve: the agent read shape', () => {
    it('shows the counterpart user, the active participant count and the last sequence', async () => {
      const s = await setupScenario(mock);
      mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'one' });
      mock.postUserMessage(s.conversationId, { user_id: s.userId, text: 'two' });
      const answer = await call('GET', `/v1/conversations/${s.conversationId}`, { token: s.apiKey });
      const { conversation } = RetrieveConversationResponse.parse(answer.body);
      expect(conversation).toMatchObject({
        id: s.conversationId,
        counterpart_user: { id: s.userId, display_name: 'Ada' },
        participant_count: 2,
        last_sequence: 2,
      });
    });
  });

  describe('conversations.createDirect', () => {
    it('creates the conversation with 201, then reuses it with 200 for the same pair either way round', async () => {
      const ada = mock.createUser({ display_name: 'Ada' });
      const bob = mock.createUser({ display_name: 'Bob' });
      const created = await call('POST', '/v1/conversations/direct', {
        token: ada.session_token,
        idempotencyKey: newKey(),
        body: { user_id: bob.user.id },
      });
      expect(created.status).toBe(201);
      const { conversation } = CreateDirectResponse.parse(created.body);
      expect(conversation).toMatchObject({
        kind: 'direct',
        counterpart_user: { id: bob.user.id, display_name: 'Bob' },
      });
      expect(conversation.participants.map((p) => p.id).sort()).toEqual([ada.user.id, bob.user.id].sort());
      const reused = await call('POST', '/v1/conversations/direct', {
        token: bob.session_token,
        idempotencyKey: newKey(),
        body: { user_id: ada.user.id },
      });
      expect(reused.status).toBe(200);
      expect(CreateDirectResponse.parse(reused.body).conversation.id).toBe(conversation.id);
    });

    it('answers 422 ineligible_target for an unverified user and 400 for oneself', async () => {
      const ada = mock.createUser({ display_name: 'Ada' });
      const ghost = mock.createUser({ display_name: 'Ghost', verified: false });
      const unverified = await call('POST', '/v1/conversations/direct', {
        token: ada.session_token,
        idempotencyKey: newKey(),
        body: { user_id: ghost.user.id },
      });
      expect(unverified.status).toBe(422);
      expect(errorOf(unverified).code).toBe('ineligible_target');
      const self = await call('POST', '/v1/conversations/direct', {
        token: ada.session_token,
        idempotencyKey: newKey(),
        body: { user_id: ada.user.id },
      });
      expect(self.status).toBe(400);
      expect(errorOf(self).message).toContain('user_id');
    });

    it('answers 400 naming user_id for a malformed id and requires an Idempotency-Key', async () => {
      const ada = mock.createUser({ display_name: 'Ada' });
      const bad = await call('POST', '/v1/conversations/direct', {
        token: ada.session_token,
        idempotencyKey: newKey(),
        body: { user_id: 'bob' },
      });
      expect(bad.status).toBe(400);
      expect(errorOf(bad).message).toContain('user_id');
      const keyless = await call('POST', '/v1/conversations/direct', {
        token: ada.session_token,
        body: { user_id: 'usr_x' },
      });
      expect(keyless.status).toBe(400);
      expect(errorOf(keyless).message).toContain('Idempotency-Key');
    });
  });
});
