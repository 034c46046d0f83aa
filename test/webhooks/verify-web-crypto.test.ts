// Where the runtime has no node:crypto (browsers, most workers), a signature is computed with Web
// Crypto, a promise; on Node it is computed at once and a delivery waits for no turn of the event
// loop. Both must verify the same deliveries and refuse the same ones. A child process without
// `process.getBuiltinModule` stands in for such a runtime (the SDK looks node:crypto up through it).
import { describe, expect, it } from 'vitest';
import { runScript } from './run-script.js';

const CHILD = `
delete process.getBuiltinModule;
const { createBot, verifyWebhook } = await import('./src/index.ts');
const { signWebhook, generateWebhookSecret } = await import('./src/testing/index.ts');
const secret = generateWebhookSecret();
const other = generateWebhookSecret();
const eventId = 'evt_web';
const body = JSON.stringify({ schema: 'svc.event.v1', eventId, type: 'message.received',
  createdAt: new Date().toISOString(), agentId: 'agt_1', conversationId: 'cnv_1',
  message: { id: 'msg_1', conversation_id: 'cnv_1', sequence: 1, sender: { id: 'usr_1' },
    parts: [{ part_index: 0, type: 'text', text: 'hi' }], fallback_text: 'hi', status: 'sent',
    created_at: new Date().toISOString() } });
const signed = await signWebhook({ id: eventId, payload: body, secret });
const stranger = await signWebhook({ id: eventId, payload: body, secret: other });
const result = {};
result.verified = (await verifyWebhook(body, signed, { secret: [other, secret] })).eventId;
result.refused = await verifyWebhook(body, stranger, { secret }).then(() => 'accepted', (error) => error.code);
const bot = createBot({ apiKey: 'ams_sk_test', webhookSecret: secret, baseUrl: 'http://127.0.0.1:9' });
const texts = [];
bot.on('message.received', (ctx) => { texts.push(ctx.text); });
const post = (headers) => bot.fetch(new Request('http://bot.test/webhook', { method: 'POST', headers, body }));
result.bad = (await post(stranger)).status;
result.good = (await post(signed)).status;
result.texts = texts;
console.log(JSON.stringify(result));
`;

describe('verification with Web Crypto, where node:crypto is missing', () => {
  it('verifies and refuses the same deliveries as on Node, through verifyWebhook and the bot', async () => {
    const { code, output } = await runScript(CHILD);
    expect({ code, result: JSON.parse(output) }).toEqual({
      code: 0,
      result: { verified: 'evt_web', refused: 'no_matching_signature', bad: 401, good: 200, texts: ['hi'] },
    });
  });
});
