import {
  AgentClient,
  AuthenticationError,
  GoneError,
  PermissionDeniedError,
  UnprocessableEntityError,
  UserClient,
} from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { bodyOf, rejectionOf, useWorld, type World } from './world.js';

const w = useWorld('loopback');

/** A second verified user who installed the agent, with a client of their own. */
function anotherTarget(world: World, name: string) {
  const { user, session_token } = world.mock.createUser({ display_name: name });
  world.mock.installAgent({ user_id: user.id, agent_id: world.agentId });
  return { id: user.id, client: new UserClient({ sessionToken: session_token, ...world.options() }) };
}

describe('groups.invite and invites.accept', () => {
  test('proposes a group with an Idempotency-Key and a snake_case body', async () => {
    const bea = anotherTarget(w, 'Bea');

    const { invite } = await w.client.groups.invite({
      title: 'Trip',
      user_ids: [w.userId, bea.id],
      reason: 'Plan the trip',
      ttl_seconds: 3600,
    });

    expect(invite.id).toMatch(/^inv_/);
    expect(invite.members.map((member) => member.user_id).sort()).toEqual([w.userId, bea.id].sort());
    const [sent] = w.requests();
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/groups/invites' });
    expect(sent?.headers['idempotency-key']).toMatch(/^[\x21-\x7e]{8,255}$/);
    expect(bodyOf(sent)).toEqual({
      title: 'Trip',
      user_ids: [w.userId, bea.id],
      reason: 'Plan the trip',
      ttl_seconds: 3600,
    });
  });

  test('completes the group when the last target accepts', async () => {
    const bea = anotherTarget(w, 'Bea');
    const { invite } = await w.client.groups.invite({
      title: 'Trip',
      user_ids: [w.userId, bea.id],
      reason: 'Plan',
    });

    const first = await w.user.invites.accept(invite.id);
    const last = await bea.client.invites.accept(invite.id);

    expect(first.conversation_id).toBeNull();
    expect(last.conversation_id).toMatch(/^cnv_/);
    const accepts = w.requests().filter((entry) => entry.path === `/v1/groups/invites/${invite.id}/accept`);
    expect(accepts.map((entry) => [entry.method, entry.body])).toEqual([
      ['POST', null],
      ['POST', null],
    ]);
  });

  test('a target who has not installed the agent is an UnprocessableEntityError', async () => {
    const { user } = w.mock.createUser({ display_name: 'Stranger' });

    const error = await rejectionOf(
      w.client.groups.invite({ title: 'Trip', user_ids: [user.id], reason: 'Plan' }),
    );

    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, code: 'ineligible_target' });
  });

  test('accepting an expired invite is a GoneError', async () => {
    const { invite } = await w.client.groups.invite({
      title: 'T',
      user_ids: [w.userId],
      reason: 'R',
      ttl_seconds: 600,
    });
    await w.mock.clock.advance(601);

    const error = await rejectionOf(w.user.invites.accept(invite.id));

    expect(error).toBeInstanceOf(GoneError);
    expect(error).toMatchObject({ status: 410, code: 'invite_expired' });
  });

  test('accepting as someone who is not a target is a PermissionDeniedError', async () => {
    const bea = anotherTarget(w, 'Bea');
    const { invite } = await w.client.groups.invite({ title: 'T', user_ids: [w.userId], reason: 'R' });

    const error = await rejectionOf(bea.client.invites.accept(invite.id));

    expect(error).toBeInstanceOf(PermissionDeniedError);
  });
});

describe('conversations.createDirect', () => {
  test('creates the direct conversation with an Idempotency-Key, then reuses it', async () => {
    const { user: bea } = w.mock.createUser({ display_name: 'Bea' });

    const created = await w.user.conversations.createDirect({ user_id: bea.id }).withResponse();
    const reused = await w.user.conversations.createDirect({ user_id: bea.id }).withResponse();

    expect(created.response.status).toBe(201);
    expect(reused.response.status).toBe(200);
    expect(reused.data.conversation.id).toBe(created.data.conversation.id);
    expect(created.data.conversation).toMatchObject({ kind: 'direct', counterpart_user: { id: bea.id } });
    const sent = w.requests();
    expect(sent.map((entry) => [entry.method, entry.path])).toEqual([
      ['POST', '/v1/conversations/direct'],
      ['POST', '/v1/conversations/direct'],
    ]);
    expect(bodyOf(sent[0])).toEqual({ user_id: bea.id });
    expect(sent[0]?.headers['idempotency-key']).toBeDefined();
    expect(sent[0]?.headers['idempotency-key']).not.toBe(sent[1]?.headers['idempotency-key']);
  });

  test('an agent token on a user endpoint is an AuthenticationError that does not show the token', async () => {
    const { user: bea } = w.mock.createUser({ display_name: 'Bea' });
    const wrong = new UserClient({ sessionToken: w.apiKey, ...w.options() });

    const error = await rejectionOf(wrong.conversations.createDirect({ user_id: bea.id }));

    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(JSON.stringify(error) + String(error) + (error as Error).stack).not.toContain(w.apiKey);
  });

  test('a user session on an agent endpoint is an AuthenticationError', async () => {
    const wrong = new AgentClient({ apiKey: w.sessionToken, ...w.options() });

    const error = await rejectionOf(wrong.conversations.retrieve(w.conversationId));

    expect(AuthenticationError.is(error)).toBe(true);
  });
});
