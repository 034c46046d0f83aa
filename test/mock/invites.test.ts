import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, type Scenario, setupScenario } from './helpers.js';

// The wire schemas as values, from the public namespace.
const {
  AcceptInviteResponse,
  CreateInviteResponse,
  InviteCompletedEvent,
  InviteExpiredEvent,
  ListMessagesResponse,
  RetrieveConversationResponse,
} = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, receiver, call } = useDoor(door);

  /** The scenario's user plus a second verified user who installed the agent. */
  async function twoTargets() {
    const s = await setupScenario(mock);
    const bob = mock.createUser({ display_name: 'Bob' });
    const bobConversation = mock.installAgent({ user_id: bob.user.id, agent_id: s.agentId }).conversation_id;
    return { s, bob, bobConversation };
  }

  async function invite(s: Scenario, body: Record<string, unknown>) {
    return call('POST', '/v1/groups/invites', { token: s.apiKey, idempotencyKey: newKey(), body });
  }

  describe('groups.invite and invites.accept', () => {
    it('creates a pending invite with a consent card in each target direct conversation', async () => {
      const { s, bob, bobConversation } = await twoTargets();
      const answer = await invite(s, {
        title: 'Launch',
        user_ids: [s.userId, bob.user.id],
        reason: 'Plan the launch',
      });
      expect(answer.status).toBe(201);
      const created = CreateInviteResponse.parse(answer.body).invite;
      expect(created).toMatchObject({ title: 'Launch', reason: 'Plan the launch', status: 'pending' });
      expect(created.members.map((m) => m.display_name)).toEqual(['Ada', 'Bob']);
      expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(86_400_000);
      for (const conversationId of [s.conversationId, bobConversation]) {
        const history = ListMessagesResponse.parse(
          (await call('GET', `/v1/conversations/${conversationId}/messages`, { token: s.apiKey })).body,
        );
        expect(history.messages[0]).toMatchObject({
          sender: { id: s.agentId },
          parts: [
            { type: 'text', text: expect.stringContaining('Plan the launch') },
            {
              type: 'actions',
              actions: [
                expect.objectContaining({ behavior: { type: 'postback', value: `accept:${created.id}` } }),
              ],
            },
          ],
        });
      }
    });

    it('clamps ttl_seconds to 600..604800', async () => {
      const s = await setupScenario(mock);
      const lifetime = async (ttl: number) => {
        const { invite: created } = CreateInviteResponse.parse(
          (await invite(s, { title: 'T', user_ids: [s.userId], reason: 'R', ttl_seconds: ttl })).body,
        );
        return (Date.parse(created.expires_at) - Date.parse(created.created_at)) / 1000;
      };
      expect(await lifetime(5)).toBe(600);
      expect(await lifetime(10_000_000)).toBe(604_800);
      expect(await lifetime(3600)).toBe(3600);
    });

    it('answers 400 naming the field for a blank title, too many targets or a repeated id', async () => {
      const s = await setupScenario(mock);
      const cases: [Record<string, unknown>, string][] = [
        [{ title: '   ', user_ids: [s.userId], reason: 'R' }, 'title'],
        [{ title: 'T', user_ids: Array.from({ length: 25 }, (_, i) => `usr_${i}`), reason: 'R' }, 'user_ids'],
        [{ title: 'T', user_ids: [s.userId, s.userId], reason: 'R' }, 'user_ids'],
        [{ title: 'T', user_ids: ['bob'], reason: 'R' }, 'user_ids[0]'],
        [{ title: 'T', user_ids: [s.userId], reason: 'x'.repeat(201) }, 'reason'],
        [{ title: 'T', user_ids: [s.userId], reason: 'R', conversation_id: 'grp_1' }, 'conversation_id'],
      ];
      for (const [body, field] of cases) {
        const answer = await invite(s, body);
        expect(answer.status, field).toBe(400);
        expect(errorOf(answer).message, field).toContain(`${field}:`);
      }
    });

    it('answers 422 ineligible_target naming the users who are unverified or did not install the agent', async () => {
      const s = await setupScenario(mock);
      const stranger = mock.createUser({ display_name: 'Stranger' });
      const unverified = mock.createUser({ display_name: 'Unverified', verified: false });
      mock.installAgent({ user_id: unverified.user.id, agent_id: s.agentId });
      const answer = await invite(s, {
        title: 'T',
        user_ids: [s.userId, stranger.user.id, unverified.user.id],
        reason: 'R',
      });
      expect(answer.status).toBe(422);
      expect(errorOf(answer).code).toBe('ineligible_target');
      expect(errorOf(answer).message).toContain(stranger.user.id);
      expect(errorOf(answer).message).toContain(unverified.user.id);
      expect(errorOf(answer).message).not.toContain(s.userId);
    });

    it('completes atomically on the last acceptance and delivers invite.completed', async () => {
      const { s, bob } = await twoTargets();
      const created = CreateInviteResponse.parse(
        (await invite(s, { title: 'Launch', user_ids: [s.userId, bob.user.id], reason: 'Plan' })).body,
      ).invite;
      const accept = (token: string) => call('POST', `/v1/groups/invites/${created.id}/accept`, { token });
      const first = AcceptInviteResponse.parse((await accept(s.sessionToken)).body);
      expect(first.conversation_id).toBeNull();
      expect(first.invite.status).toBe('pending');
      // Repeating an acceptance while pending changes nothing.
      expect(AcceptInviteResponse.parse((await accept(s.sessionToken)).body).conversation_id).toBeNull();
      await mock.idle();
      expect(receiver.ofType('invite.completed')).toHaveLength(0);
      const last = AcceptInviteResponse.parse((await accept(bob.session_token)).body);
      expect(last.invite.status).toBe('completed');
      expect(last.conversation_id).toMatch(/^cnv_/);
      const group = RetrieveConversationResponse.parse(
        (await call('GET', `/v1/conversations/${last.conversation_id}`, { token: s.apiKey })).body,
      ).conversation;
      expect(group).toMatchObject({ title: 'Launch', participant_count: 3 });
      await mock.idle();
      const [delivery] = receiver.ofType('invite.completed');
      const event = InviteCompletedEvent.parse(delivery?.json);
      expect(event).toMatchObject({ conversationId: last.conversation_id, invite: { id: created.id } });
      // An accept after completion answers the same completed result.
      expect(AcceptInviteResponse.parse((await accept(s.sessionToken)).body).conversation_id).toBe(
        last.conversation_id,
      );
    });

    it('adds every target to an existing group and raises its membership_version', async () => {
      const { s, bob } = await twoTargets();
      const created = CreateInviteResponse.parse(
        (await invite(s, { title: 'G', user_ids: [s.userId], reason: 'R' })).body,
      ).invite;
      const groupId = AcceptInviteResponse.parse(
        (await call('POST', `/v1/groups/invites/${created.id}/accept`, { token: s.sessionToken })).body,
      ).conversation_id;
      const again = await invite(s, {
        title: 'G',
        user_ids: [s.userId],
        reason: 'R',
        conversation_id: groupId,
      });
      expect(again.status).toBe(400);
      expect(errorOf(again).message).toContain('user_ids');
      const addition = CreateInviteResponse.parse(
        (await invite(s, { title: 'G', user_ids: [bob.user.id], reason: 'Join', conversation_id: groupId }))
          .body,
      ).invite;
      expect(addition.conversation_id).toBe(groupId);
      const accepted = AcceptInviteResponse.parse(
        (await call('POST', `/v1/groups/invites/${addition.id}/accept`, { token: bob.session_token })).body,
      );
      expect(accepted.conversation_id).toBe(groupId);
      const group = RetrieveConversationResponse.parse(
        (await call('GET', `/v1/conversations/${groupId}`, { token: s.apiKey })).body,
      );
      expect(group.conversation.participant_count).toBe(3);
    });

    it('answers 404 for an invite into a group the agent is not in', async () => {
      const s = await setupScenario(mock);
      const answer = await invite(s, {
        title: 'G',
        user_ids: [s.userId],
        reason: 'R',
        conversation_id: 'cnv_unknown',
      });
      expect(answer.status).toBe(404);
      const direct = await invite(s, {
        title: 'G',
        user_ids: [s.userId],
        reason: 'R',
        conversation_id: s.conversationId,
      });
      expect(direct.status).toBe(404);
    });

    it('answers 403 to an accept by a user who is not a target', async () => {
      const s = await setupScenario(mock);
      const created = CreateInviteResponse.parse(
        (await invite(s, { title: 'G', user_ids: [s.userId], reason: 'R' })).body,
      ).invite;
      const outsider = mock.createUser({ display_name: 'Out' });
      const answer = await call('POST', `/v1/groups/invites/${created.id}/accept`, {
        token: outsider.session_token,
      });
      expect(answer.status).toBe(403);
      expect(errorOf(answer).code).toBe('forbidden');
      const agent = await call('POST', `/v1/groups/invites/${created.id}/accept`, { token: s.apiKey });
      expect(agent.status).toBe(401);
    });

    it('expires on the clock: delivers invite.expired, and an accept answers 410', async () => {
      const s = await setupScenario(mock);
      const created = CreateInviteResponse.parse(
        (await invite(s, { title: 'G', user_ids: [s.userId], reason: 'R', ttl_seconds: 600 })).body,
      ).invite;
      await mock.clock.advance(599);
      await mock.idle();
      expect(receiver.ofType('invite.expired')).toHaveLength(0);
      await mock.clock.advance(1);
      await mock.idle();
      const event = InviteExpiredEvent.parse(receiver.ofType('invite.expired')[0]?.json);
      expect(event.invite).toMatchObject({ id: created.id, status: 'expired' });
      const answer = await call('POST', `/v1/groups/invites/${created.id}/accept`, { token: s.sessionToken });
      expect(answer.status).toBe(410);
      expect(errorOf(answer).code).toBe('invite_expired');
    });

    it('answers 400 for a malformed invite id and 404 for an unknown one', async () => {
      const s = await setupScenario(mock);
      expect((await call('POST', '/v1/groups/invites/abc/accept', { token: s.sessionToken })).status).toBe(
        400,
      );
      expect(
        (await call('POST', '/v1/groups/invites/inv_unknown/accept', { token: s.sessionToken })).status,
      ).toBe(404);
    });

    it('replays an invite creation with the same key instead of placing new cards', async () => {
      const s = await setupScenario(mock);
      const key = newKey();
      const body = { title: 'G', user_ids: [s.userId], reason: 'R' };
      const first = await call('POST', '/v1/groups/invites', { token: s.apiKey, idempotencyKey: key, body });
      const second = await call('POST', '/v1/groups/invites', { token: s.apiKey, idempotencyKey: key, body });
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages).toHaveLength(1);
    });
  });
});
