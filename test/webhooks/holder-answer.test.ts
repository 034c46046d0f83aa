// The holder of a conversation answers its own delivery once its own message was settled, not once
// it worked through the messages queued behind it meanwhile; that drain goes on, counted by
// bot.idle() and handed to `waitUntil` so an edge runtime keeps it alive after the answer.
import { type BotStore, createMemoryStore } from 'agent-messaging';
import { describe, it } from 'vitest';
import { holderAnswersFirst } from './holder-answer.js';

// The store, and how many members its queue holds while m1 runs with m2 and m3 behind it.
const stores: [string, () => BotStore, number][] = [
  // m1 runs on the memory store's idle-conversation path (lane-fast-path.ts), unqueued, then drains.
  ['the memory store', () => createMemoryStore(), 2],
  // The same store without its synchronous steps: m1's admit wins the lock and follow() drains; m1
  // stays queued until its settle.
  ['a store of composed steps', () => ({ ...createMemoryStore() }), 3],
];

describe("the holder's own delivery", () => {
  it.each(stores)(
    'is answered 200 once its message was handled while the queue behind it still runs (%s)',
    (_name, makeStore, queuedWhileM1Runs) => holderAnswersFirst(makeStore(), queuedWhileM1Runs),
  );
});
