// The holder's own delivery on the Redis store (lock renewals and dedupe holds
// through Redis): answered 200 once its message was handled while the queue behind it still runs,
// the drain that goes on counted by bot.idle() and handed to `waitUntil` (test/webhooks/holder-answer.ts).
import { createRedisStore } from 'agent-messaging/redis';
import { describe, it } from 'vitest';
import { holderAnswersFirst } from '../webhooks/holder-answer.js';
import { connectClient, redisForFile, uniquePrefix } from './redis-server.js';

const file = redisForFile();

describe("the holder's own delivery on Redis", () => {
  it('is answered 200 once its message was handled while the queue behind it still runs', async () => {
    const client = await connectClient(file.server.url);
    const store = createRedisStore({ client, prefix: uniquePrefix('holder') });
    file.cleanups.push(async () => {
      await store.close();
      client.destroy();
    });
    // m1 stays queued in Redis until its settle: three members while it runs.
    await holderAnswersFirst(store);
  });
});
