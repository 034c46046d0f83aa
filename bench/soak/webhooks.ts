// Soak part 3: webhook deliveries that the network loses, doubles or fails, so the service delivers
// them again (same webhook-id), must run each handler exactly once; the bot's replies are checked too.
import { createBot } from '../../src/index.js';
import type { Row } from '../lib/report.js';
import { fmt, seededRandom } from '../lib/stats.js';
import { agentMessages, startWorld, textOf } from '../lib/world.js';

/** How big a run is. */
export interface WebhookSoakSize {
  deliveries: number;
  conversations: number;
  seed: number;
}

/** What the network does to an event's first delivery. */
type Fate = 'delivered' | 'answer lost' | 'delivered twice' | 'connection failed';

/** Posts user messages, lets the mock deliver them to a bot through a faulty "network", and counts. */
export async function soakWebhooks(size: WebhookSoakSize) {
  const random = seededRandom(size.seed);
  const fates = new Map<string, Fate>();
  let deliver: ((request: Request) => Promise<Response>) | undefined;
  // The mock's webhook sender: until the bot exists (the webhook.test), a plain 204.
  const network = async (request: Request): Promise<Response> => {
    if (deliver === undefined) return new Response(null, { status: 204 });
    return deliver(request);
  };
  const world = await startWorld({ users: size.conversations, mock: { fetch: network } });
  try {
    const runs = new Map<string, number>();
    const bot = createBot({
      apiKey: world.apiKey,
      webhookSecret: world.webhookSecret,
      baseUrl: world.baseUrl,
    });
    bot.on('message.received', async (ctx) => {
      runs.set(ctx.event.eventId, (runs.get(ctx.event.eventId) ?? 0) + 1);
      await ctx.reply(`echo: ${ctx.text}`);
    });
    deliver = async (request) => {
      const id = request.headers.get('webhook-id') ?? '';
      if (fates.has(id)) return bot.fetch(request); // a redelivery goes straight through
      const roll = random();
      const fate: Fate =
        roll < 0.3
          ? 'answer lost'
          : roll < 0.5
            ? 'delivered twice'
            : roll < 0.6
              ? 'connection failed'
              : 'delivered';
      fates.set(id, fate);
      if (fate === 'connection failed') throw new TypeError('fetch failed: socket hang up');
      if (fate === 'answer lost') {
        await bot.fetch(request); // the handler runs, but its 200 never reaches the service
        return new Response(null, { status: 502 });
      }
      if (fate === 'delivered twice') {
        const [first] = await Promise.all([bot.fetch(request.clone()), bot.fetch(request)]);
        return first;
      }
      return bot.fetch(request);
    };
    const started = performance.now();
    for (let i = 0; i < size.deliveries; i++) {
      const conversation = world.conversations[i % size.conversations]!;
      world.mock.postUserMessage(conversation, {
        user_id: world.userIds[i % size.conversations]!,
        text: `user message ${i}`,
      });
    }
    // Failed attempts are retried on the mock's clock (5 s, then 5 min, ...): move it until all are answered.
    const received = () => world.mock.deliveries.filter((delivery) => delivery.type === 'message.received');
    const acknowledged = () =>
      new Set(
        received()
          .filter((d) => d.status !== null && d.status < 300)
          .map((d) => d.event_id),
      );
    for (const seconds of [5, 300, 1800]) {
      await world.mock.idle();
      if (acknowledged().size === size.deliveries) break;
      await world.mock.clock.advance(seconds);
    }
    await world.mock.idle();
    const seconds = (performance.now() - started) / 1000;
    const events = new Set(received().map((delivery) => delivery.event_id));
    const attempts = received().length;
    const redelivered = new Set(
      received()
        .filter((d) => d.attempt > 1)
        .map((d) => d.event_id),
    ).size;
    const notOnce = [...events].filter((id) => runs.get(id) !== 1);
    const replies = new Map<string, number>();
    for (const conversation of world.conversations) {
      for (const message of await agentMessages(world, conversation)) {
        const text = textOf(message) ?? '';
        replies.set(text, (replies.get(text) ?? 0) + 1);
      }
    }
    const replyCount = [...replies.values()].reduce((sum, n) => sum + n, 0);
    const doubledReplies = [...replies.values()].filter((n) => n > 1).length;
    const ok =
      events.size === size.deliveries &&
      acknowledged().size === size.deliveries &&
      notOnce.length === 0 &&
      replyCount === size.deliveries &&
      doubledReplies === 0;
    const count = (fate: Fate) => [...fates.values()].filter((value) => value === fate).length;
    const rows: Row[] = [
      {
        measurement: `webhook deliveries, ${fmt(redelivered)} redelivered`,
        result: `${fmt(size.deliveries - notOnce.length)}/${fmt(events.size)} handlers ran exactly once, ${fmt(replyCount)} replies (${doubledReplies} doubled)`,
        goal: `each of ${fmt(size.deliveries)} handlers once`,
        status: ok ? 'met' : 'NOT MET',
      },
    ];
    const details = [
      `${fmt(size.deliveries)} \`message.received\` events over ${size.conversations} conversations, delivered by the ` +
        `mock to \`bot.fetch\` through a faulty network (seed ${size.seed}): first delivery answered normally ` +
        `${count('delivered')}×, handled but its answer lost ${count('answer lost')}×, delivered twice at once ` +
        `${count('delivered twice')}×, connection failed before the bot ${count('connection failed')}×. The mock ` +
        `retried on its clock with the same webhook-id: ${fmt(attempts)} attempts in all, ${fmt(redelivered)} events ` +
        `delivered more than once, ${fmt(acknowledged().size)} acknowledged. Each handler replies with ` +
        `\`ctx.reply\`; the history holds ${fmt(replyCount)} replies. ${fmt(seconds, 1)} s.`,
      ...notOnce.slice(0, 10).map((id) => `- ${id}: handler ran ${runs.get(id) ?? 0} times`),
    ];
    return { ok, rows, details };
  } finally {
    await world.close();
  }
}
