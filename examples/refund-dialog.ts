// Run: `npm run mock` in one terminal, then `npx tsx examples/refund-dialog.ts` (PORT=3000 by default).
//
// A two-step refund dialog that survives restarts: a confirm with buttons (or a typed yes/no), a
// free-text follow-up checked by a zod schema, and a timeout that answers for the user who went
// away. Nothing is kept in this process: the pending question, its state and its deadline live in
// the bot store, so any instance (give them all one Redis store) takes the answer, and one of them
// fires the timeout, once. `/cancel` still reaches its command while a question waits.

import { fileURLToPath } from 'node:url';
import { type Bot, type BotOptions, createBot, idempotencyKeyFor } from 'agent-messaging';
import * as z from 'zod';
import { serveBot } from './echo-bot.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** Where refunds go; a real bot calls its payment provider with the idempotency key given. */
export interface Refunds {
  refund(order: { orderId: string; amount: number; reason: string }, idempotencyKey: string): Promise<void>;
}

const printRefunds: Refunds = {
  refund: async (order) => console.log(`(refund $${order.amount} for ${order.orderId}: ${order.reason})`),
};

/** The refund bot. */
export function createRefundBot(options: BotOptions, refunds: Refunds = printRefunds): Bot {
  const bot = createBot(options);

  // Step 1: the confirm. Ten minutes to click (or type) yes or no.
  bot.question('refund-confirm', {
    choices: ['yes', 'no'],
    timeoutMs: 10 * 60_000,
    onAnswer: async (ctx, answer, state) => {
      if (answer === 'no') return ctx.reply('Okay, nothing was refunded.');
      // Step 2, asked from the answer's handler: the state goes on to the next question.
      await ctx.ask('refund-reason', 'What went wrong with the order? A sentence is enough.', { state });
    },
    // No message needed: one instance runs this once the ten minutes are up.
    onTimeout: (ctx, state) =>
      ctx.reply(`No answer, so order ${state.orderId} was not refunded. Say "refund" to start again.`),
  });

  // Step 2: free text, checked by a schema; a bad answer is asked again (twice, then given up).
  bot.question('refund-reason', {
    schema: z.string().trim().min(10, 'Could you say a little more?'),
    timeoutMs: 30 * 60_000,
    onAnswer: async (ctx, reason, state) => {
      const order = { orderId: String(state.orderId), amount: Number(state.amount), reason };
      // A retry of this delivery (the refund service failed after charging) must not refund twice.
      await refunds.refund(order, idempotencyKeyFor(ctx.webhookId, 'refund'));
      await ctx.reply(`Refunded $${order.amount} for order ${order.orderId}. Thanks for telling us.`);
    },
    onTimeout: (ctx, state) => ctx.reply(`Order ${state.orderId}: no reason came, so nothing was refunded.`),
  });

  // Commands go to their handlers even while a question waits for its answer.
  bot.command('/cancel', async (ctx) =>
    ctx.reply((await ctx.cancelQuestion()) ? 'Cancelled: nothing was refunded.' : 'Nothing to cancel.'),
  );
  bot.hears(/refund/i, (ctx) =>
    ctx.ask('refund-confirm', 'Refund $42 for order o_42 to your card?', {
      state: { orderId: 'o_42', amount: 42 },
      quickReplies: [
        { actionId: 'yes', label: 'Yes, refund it' },
        { actionId: 'no', label: 'No' },
      ],
    }),
  );
  bot.on('message.received', (ctx) => ctx.reply('Say "refund" to get your money back for order o_42.'));
  return bot;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const agent = await credentialsFromEnv('refunds');
  const bot = createRefundBot(agent);
  const server = await serveBot(bot, Number(process.env.PORT ?? 3000));
  console.log(`Refund bot listening: POST ${webhookUrl(server)}`);
  await chatOnMock(bot.client, agent, webhookUrl(server), 'I want a refund');
}
