// The holder of a conversation answers its own delivery once its own message was settled, not once
// it worked through the messages queued behind it meanwhile; that drain goes on, counted by
// bot.idle() and handed to `waitUntil` so an edge runtime keeps it alive after the answer.
import { type BotStore, composeAdmit, composeSettle, createMemoryStore } from 'agent-messaging';
import { describe, it } from 'vitest';
import { holderAnswersFirst } from './holder-answer.js';

// m1 stays queued until its settle, so the queue holds m1, m2 and m3 while m1 runs.
const stores: [string, () => BotStore][] = [
  ['the memory store', () => createMemoryStore()],
  // A custom store whose admit and settle are the same steps composed from its primitives.
  [
    'a store of composed steps',
    () => {
      const store: BotStore = {
        ...createMemoryStore(),
        admit: (request) => composeAdmit(store, request),
        settle: (request) => composeSettle(store, request),
      };
      return store;
    },
  ],
];

describe("the holder's own delivery", () => {
  it.each(stores)(
    'is answered 200 once its message was handled while the queue behind it still runs (%s)',
    (_name, makeStore) => holderAnswersFirst(makeStore()),
  );
});
