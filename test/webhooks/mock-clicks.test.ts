// PROTOCOL.md section 14 on the mock: a click posts the label as a user message replying to the
// actions block, its delivery carries `postback`, and invoked_agents follows the mention rule.
import { type MessageReceivedEvent, UserClient } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { createLoop, type Loop } from './harness.js';

const quickReplies = {
  schema: 'svc.agent-send.v1' as const,
  content: [
    { type: 'text' as const, text: 'Pick one' },
    {
      type: 'actions' as const,
      layout: 'quick_replies' as const,
      actions: [
        { actionId: 'yes', label: 'Yes please', behavior: { type: 'postback' as const, value: 'pick:yes' } },
        { actionId: 'no', label: 'No', behavior: { type: 'postback' as const, value: 'pick:no' } },
      ],
    },
  ],
};

async function received(loop: Loop) {
  const events: MessageReceivedEvent[] = [];
  loop.bot.on('message.received', (ctx) => {
    events.push(ctx.event);
  });
  return events;
}

describe('the mock delivers quick-reply clicks (section 14)', () => {
  it('posts the label as a user message replying to the block, with postback in the webhook body only', async () => {
    const loop = await createLoop();
    const events = await received(loop);
    const sent = await loop.bot.client.messages.send(loop.conversationId, quickReplies);
    const { message } = loop.mock.clickAction({
      conversation_id: loop.conversationId,
      user_id: loop.user.id,
      message_id: sent.message.id,
      action_id: 'yes',
    });
    await loop.mock.idle();
    expect(message).toMatchObject({
      sender: { id: loop.user.id },
      parts: [{ type: 'text', text: 'Yes please' }],
      reply_to: { message_id: sent.message.id, part_index: 1 },
    });
    expect(message).not.toHaveProperty('postback');
    expect(events).toHaveLength(1);
    expect(events[0]?.postback).toEqual({ actionId: 'yes', value: 'pick:yes', messageId: sent.message.id });
    expect(events[0]?.message.id).toBe(message.id);
    // The stored message has no postback either.
    const { messages } = await loop.bot.client.conversations.listMessages(loop.conversationId);
    expect(messages[0]).not.toHaveProperty('postback');
    expect(messages[0]?.id).toBe(message.id);
  });

  it('answers POST /_mock/conversations/{id}/postbacks with the message, 404 and 400 as section 14 says', async () => {
    const loop = await createLoop();
    const events = await received(loop);
    const sent = await loop.bot.client.messages.send(loop.conversationId, quickReplies);
    const click = (body: Record<string, unknown>, conversationId = loop.conversationId) =>
      loop.mock.fetch(`/_mock/conversations/${conversationId}/postbacks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await click({ user_id: loop.user.id, message_id: sent.message.id, action_id: 'no' });
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { message: { parts: unknown[] } }).message.parts).toEqual([
      { part_index: 0, type: 'text', text: 'No' },
    ]);
    const unknownAction = await click({
      user_id: loop.user.id,
      message_id: sent.message.id,
      action_id: 'maybe',
    });
    expect(unknownAction.status).toBe(404);
    const unknownMessage = await click({ user_id: loop.user.id, message_id: 'msg_nope', action_id: 'no' });
    expect(unknownMessage.status).toBe(404);
    const otherConversation = await click(
      { user_id: loop.user.id, message_id: sent.message.id, action_id: 'no' },
      'cnv_other',
    );
    expect(otherConversation.status).toBe(404);
    const malformed = await click({ user_id: loop.user.id, message_id: sent.message.id });
    expect(malformed.status).toBe(400);
    await loop.mock.idle();
    // Only the valid click posted and delivered.
    expect(events.map((event) => event.postback?.actionId)).toEqual(['no']);
  });

  it('refuses a click on a consent card (400): accepting is the accept call of section 12', async () => {
    const loop = await createLoop();
    await received(loop);
    await loop.bot.client.groups.invite(
      { title: 'Launch', user_ids: [loop.user.id], reason: 'Plan it' },
      { idempotencyKey: 'invite-1' },
    );
    const { messages } = await loop.bot.client.conversations.listMessages(loop.conversationId);
    const card = messages.find((m) => m.parts?.some((p) => p.type === 'actions'));
    expect(card).toBeDefined();
    expect(() =>
      loop.mock.clickAction({
        conversation_id: loop.conversationId,
        user_id: loop.user.id,
        message_id: card?.id ?? '',
        action_id: 'accept',
      }),
    ).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('invoked_agents (section 14)', () => {
  it('is always the agent in its agent-kind conversation, named or not', async () => {
    const loop = await createLoop();
    const events = await received(loop);
    await loop.post('no name here');
    expect(events[0]?.message.invoked_agents).toEqual([loop.agent.id]);
  });

  it('lists the agents a group message names by @handle, case-insensitively, on word edges only', async () => {
    const loop = await createLoop();
    const events = await received(loop);
    const { invite } = await loop.bot.client.groups.invite(
      { title: 'Team', user_ids: [loop.user.id], reason: 'Work' },
      { idempotencyKey: 'invite-2' },
    );
    const sessionToken = loop.mock.snapshot().users.find((u) => u.id === loop.user.id)?.session_token;
    const user = new UserClient({ sessionToken: sessionToken ?? '', ...loop.connection });
    const { conversation_id: groupId } = await user.invites.accept(invite.id);
    expect(groupId).toMatch(/^cnv_/);
    const say = (text: string) =>
      loop.mock.postUserMessage(groupId ?? '', { user_id: loop.user.id, text }).message.invoked_agents;
    expect(say('@Echo_Bot what now?')).toEqual([loop.agent.id]);
    expect(say('ping (@echo_bot)')).toEqual([loop.agent.id]);
    expect(say('hello everyone')).toEqual([]);
    expect(say('mail me at ada@echo_bot.com')).toEqual([]);
    expect(say('@echo_bots is someone else')).toEqual([]);
    await loop.mock.idle();
    // Every user message of the group still reaches the agent, named or not (section 6).
    expect(events.filter((e) => e.conversationId === groupId)).toHaveLength(5);
    // An agent's own message invokes no one.
    const sent = await loop.bot.client.messages.send(groupId ?? '', {
      schema: 'svc.agent-send.v1',
      content: [{ type: 'text', text: 'hi @echo_bot' }],
    });
    const { messages } = await loop.bot.client.conversations.listMessages(groupId ?? '');
    expect(messages.find((m) => m.id === sent.message.id)?.invoked_agents).toEqual([]);
  });
});
