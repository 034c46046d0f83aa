// examples/refund-dialog.ts against the mock on a loopback port: the confirm, the free-text follow-up
// (re-asked when too short), the timeout fired after the mock's clock jumped, and /cancel.
import { describe, expect, it } from 'vitest';
import { serveBot } from '../../examples/echo-bot.js';
import { createRefundBot, type Refunds } from '../../examples/refund-dialog.js';
import { agentMessages, newAgent, startMock, stopAfterTest, verifyWebhook } from './setup.js';

/** The example's bot on a loopback port, its deadlines on the mock's clock, with refunds recorded. */
async function refundWorld() {
  const { mock, baseUrl } = await startMock();
  const agent = await newAgent(mock, baseUrl);
  const refunded: { order: Parameters<Refunds['refund']>[0]; key: string }[] = [];
  const bot = createRefundBot(
    { ...agent.options, clock: () => mock.clock.now() },
    { refund: async (order, key) => void refunded.push({ order, key }) },
  );
  await verifyWebhook(bot.client, agent.agentId, stopAfterTest(await serveBot(bot, 0, '127.0.0.1')));
  const { user, conversationId } = agent;
  const settle = async () => {
    await mock.idle();
    await bot.idle();
  };
  return {
    mock,
    bot,
    refunded,
    async say(text: string) {
      mock.postUserMessage(conversationId, { user_id: user.id, text });
      await settle();
    },
    async click(message_id: string, action_id: string) {
      mock.clickAction({ conversation_id: conversationId, user_id: user.id, message_id, action_id });
      await settle();
    },
    /** The agent's messages, oldest first. */
    messages: () => agentMessages(bot.client, conversationId, agent.agentId),
    async texts() {
      return (await this.messages()).map((message) => message.fallback_text);
    },
  };
}

describe('examples/refund-dialog.ts', () => {
  it('confirms with a click, asks why (re-asking a short answer), then refunds once', async () => {
    const w = await refundWorld();
    await w.say('I want a refund');
    const [question] = await w.messages();
    expect(question?.parts?.map((part) => part.type)).toEqual(['text', 'actions']);
    await w.click(question?.id ?? '', 'yes');
    await w.say('broken');
    await w.say('The parcel arrived crushed.');
    expect(await w.texts()).toEqual([
      'Refund $42 for order o_42 to your card?',
      'What went wrong with the order? A sentence is enough.',
      'Could you say a little more?\nWhat went wrong with the order? A sentence is enough.',
      'Refunded $42 for order o_42. Thanks for telling us.',
    ]);
    expect(w.refunded).toHaveLength(1);
    expect(w.refunded[0]?.order).toEqual({
      orderId: 'o_42',
      amount: 42,
      reason: 'The parcel arrived crushed.',
    });
    // Nothing is pending any more: the deadlines pass in silence, and a message gets the usual answer.
    await w.mock.clock.advance(31 * 60);
    expect(await w.bot.fireDueQuestions()).toBe(0);
    await w.say('thanks');
    expect((await w.texts()).at(-1)).toBe('Say "refund" to get your money back for order o_42.');
  });

  it('answers for the user who went away once the ten minutes are up, with no message', async () => {
    const w = await refundWorld();
    await w.say('refund please');
    await w.mock.clock.advance(10 * 60 + 1);
    await w.bot.fireDueQuestions(); // what the bot's own timer does every second
    const [question, timedOut] = await w.messages();
    expect(timedOut?.fallback_text).toBe(
      'No answer, so order o_42 was not refunded. Say "refund" to start again.',
    );
    expect(timedOut?.reply_to?.message_id).toBe(question?.id);
    // A late click on its buttons does nothing.
    await w.click(question?.id ?? '', 'yes');
    expect(await w.messages()).toHaveLength(2);
    expect(w.refunded).toEqual([]);
  });

  it('/cancel reaches its command while the question waits, and ends it', async () => {
    const w = await refundWorld();
    await w.say('refund');
    await w.say('/cancel');
    await w.say('yes');
    await w.mock.clock.advance(10 * 60 + 1);
    expect(await w.bot.fireDueQuestions()).toBe(0);
    expect(await w.texts()).toEqual([
      'Refund $42 for order o_42 to your card?',
      'Cancelled: nothing was refunded.',
      'Say "refund" to get your money back for order o_42.',
    ]);
  });
});
