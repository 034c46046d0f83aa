// Run: `npm run mock` in one terminal, then `npx tsx examples/group-invites.ts`.
// (On the real service: AMS_API_KEY, AMS_WEBHOOK_SECRET, a public webhook, and AMS_USER_IDS=usr_a,usr_b.)
//
// An agent brings users together: it proposes a group to users who installed it, each of them gets a
// consent card in their conversation with the agent, and the service creates the group only once every
// one of them accepted. The agent never adds anyone itself; it learns of the group from the
// `invite.completed` webhook event, and says hello there.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  type AcceptInviteResponse,
  type AgentClient,
  type Bot,
  type BotOptions,
  createBot,
  type GroupInvite,
  idempotencyKeyFor,
  UserClient,
} from 'agent-messaging';
import { toNodeHandler } from 'agent-messaging/node';
import {
  closeServer,
  credentialsFromEnv,
  mockControl,
  throwawayAgentId,
  webhookUrl,
} from './support/try-on-mock.js';

/** A bot that posts a welcome in each group the service completes for it. */
export function createGroupBot(options: BotOptions): Bot {
  return createBot(options).on('invite.completed', async (ctx) => {
    const { invite, conversationId } = ctx.event;
    const names = invite.members.map((member) => member.display_name).join(', ');
    // The key comes from the delivery: a redelivered event cannot post the welcome twice.
    const idempotencyKey = idempotencyKeyFor(ctx.webhookId, 'welcome');
    await ctx.client.messages.send(conversationId, { text: `Welcome, ${names}!` }, { idempotencyKey });
  });
}

/**
 * Proposes a new group. The targets must be verified users who installed the agent; the invite
 * expires by itself if someone never accepts (there is no decline). When a webhook event triggers the
 * proposal, pass `idempotencyKeyFor(event.eventId, 'invite')` so that a redelivery cannot invite twice.
 */
export async function proposeGroup(
  client: AgentClient,
  userIds: string[],
  title: string,
  idempotencyKey?: string,
): Promise<GroupInvite> {
  const { invite } = await client.groups.invite(
    {
      title,
      user_ids: userIds,
      reason: 'You all asked about the trip: plan it together here.',
      ttl_seconds: 2 * 24 * 3600, // clamped by the service to 10 minutes .. 7 days
    },
    { idempotencyKey },
  );
  return invite;
}

/**
 * What a user's app does when its user taps Accept on the consent card (whose postback value is
 * `accept:<invite id>`): accept with the user's own session. `conversation_id` stays null until the
 * last target accepts.
 */
export function acceptInvite(
  sessionToken: string,
  inviteId: string,
  baseUrl?: string,
): Promise<AcceptInviteResponse> {
  return new UserClient({ sessionToken, baseUrl }).invites.accept(inviteId);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('trip_planner');
  const bot = createGroupBot(agent);
  const ready = new Promise<string>((resolve) => {
    bot.on('invite.completed', (ctx) => resolve(ctx.event.conversationId)); // runs after the welcome
  });
  const server = createServer(toNodeHandler(bot)).listen(Number(process.env.PORT ?? 3000));
  await once(server, 'listening');

  const agentId = throwawayAgentId(agent);
  if (agentId === undefined) {
    // A real agent: the users accept in their own app; wait for the service to tell the bot.
    const userIds = (process.env.AMS_USER_IDS ?? '').split(',').filter(Boolean);
    const invite = await proposeGroup(bot.client, userIds, 'Trip planning');
    console.log(`Proposed ${invite.id} to ${userIds.join(', ')}; waiting for everyone to accept...`);
  } else {
    // On the mock: verify the webhook, make two users who installed the agent, and accept for them.
    await bot.client.agents.setWebhook(agentId, {
      webhook_url: webhookUrl(server),
      capabilities: ['text'],
    });
    const mock = mockControl(agent.baseUrl);
    const users = [await mock.createUser('Ada'), await mock.createUser('Grace')];
    for (const { user } of users) await mock.install(user.id, agentId);
    const invite = await proposeGroup(
      bot.client,
      users.map(({ user }) => user.id),
      'Trip planning',
    );
    console.log(`Proposed "${invite.title}" (${invite.id}) to ${invite.members.length} users`);
    for (const { user, session_token } of users) {
      const { conversation_id } = await acceptInvite(session_token, invite.id, agent.baseUrl);
      console.log(
        `${user.display_name} accepted: ${conversation_id ? `group ${conversation_id} created` : 'waiting for the others'}`,
      );
    }
  }
  const groupId = await ready;
  const { conversation } = await bot.client.conversations.retrieve(groupId);
  console.log(
    `invite.completed reached the bot: "${conversation.title}", ${conversation.participant_count} participants`,
  );
  await closeServer(server);
}
