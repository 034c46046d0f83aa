// The service's retry of a delivery answered 409 waits for the run still going elsewhere (another
// instance on a shared store), polling the claim. Those polls are the delivery's own wait: they must
// keep Node alive until the retry is answered, though nothing else does.
import { describe, expect, it } from 'vitest';
import { EVENT_BODY, runScript } from './run-script.js';

// Two bots on one store, as two instances would be: the first answers 409 past its ackTimeoutMs while
// its handler runs on, on a timer that does not keep Node alive; the retry reaches the second, which
// can only poll the claim.
const CHILD = `
import { createBot, createMemoryStore } from './src/index.ts';
import { signWebhook } from './src/testing/index.ts';
const secret = 'whsec_' + Buffer.alloc(32, 4).toString('base64');
const store = createMemoryStore();
const options = { apiKey: 'ams_sk_test', webhookSecret: secret, baseUrl: 'http://127.0.0.1:9', store };
const first = createBot({ ...options, ackTimeoutMs: 50 });
first.on('message.received', () => new Promise((done) => setTimeout(done, 1000).unref()));
const second = createBot(options);
second.on('message.received', () => console.log('ran twice'));
const eventId = 'evt_child';
${EVENT_BODY}const headers = await signWebhook({ id: eventId, payload: body, secret });
const request = () => new Request('http://bot.test/webhook', { method: 'POST', headers, body });
console.log('first', (await first.fetch(request())).status);
const retry = await second.fetch(request());
console.log('retry', retry.status, JSON.stringify(await retry.json()));
`;

describe('a retry waiting on a run of another instance', () => {
  it('keeps Node alive until it is answered: 200 duplicate once that run succeeded', async () => {
    const ended = await runScript(CHILD);
    expect(ended).toEqual({
      output: 'first 409\nretry 200 {"received":true,"duplicate":true}',
      code: 0,
      signal: null,
    });
  });
});
