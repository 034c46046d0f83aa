import { describe, expect, it } from 'vitest';
import { acceptInvite, createGroupBot, proposeGroup } from '../../examples/group-invites.js';
import {
  agentMessages,
  deliveries,
  newAgent,
  requestsTo,
  serveFetch,
  startMock,
  userWithAgent,
  verifyWebhook,
} from './setup.js';

describe('examples/group-invites.ts', () => {
  it('creates the group once every user accepted, and the bot welcomes it on invite.completed', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl);
    const bot = createGroupBot(agent.options);
    await verifyWebhook(bot.client, agent.agentId, await serveFetch(bot));
    const ada = agent; // the seed's user, Ada
    const grace = userWithAgent(mock, agent.agentId, 'Grace');

    const invite = await proposeGroup(bot.client, [ada.user.id, grace.user.id], 'Trip planning');

    // Each target got a consent card in their conversation with the agent, its button naming the invite.
    for (const { conversationId } of [ada, grace]) {
      const [card] = await agentMessages(bot.client, conversationId, agent.agentId);
      const actions = card?.parts?.find((part) => part.type === 'actions');
      expect(JSON.stringify(actions)).toContain(`"accept:${invite.id}"`);
    }
    const first = await acceptInvite(ada.sessionToken, invite.id, baseUrl);
    expect(first.conversation_id).toBeNull();
    const last = await acceptInvite(grace.sessionToken, invite.id, baseUrl);
    const groupId = last.conversation_id as string;
    expect(groupId).toMatch(/^cnv_/);
    await mock.idle();

    expect(deliveries(mock)).toEqual([
      ['webhook.test', 200],
      ['invite.completed', 200],
    ]);
    const { conversation } = await bot.client.conversations.retrieve(groupId);
    expect(conversation).toMatchObject({ title: 'Trip planning', participant_count: 3 });
    const welcome = await agentMessages(bot.client, groupId, agent.agentId);
    expect(welcome.map((message) => message.fallback_text)).toEqual(['Welcome, Ada, Grace!']);

    const [proposal] = requestsTo(mock, 'POST', /^\/v1\/groups\/invites$/);
    expect(proposal?.headers['idempotency-key']).toMatch(/.{8,}/);
    expect(JSON.parse(proposal?.body ?? '')).toMatchObject({ user_ids: [ada.user.id, grace.user.id] });
    expect(requestsTo(mock, 'POST', /\/accept$/).map((entry) => entry.path)).toEqual([
      `/v1/groups/invites/${invite.id}/accept`,
      `/v1/groups/invites/${invite.id}/accept`,
    ]);
  });
});
