// The control surface over HTTP under /_mock (PROTOCOL.md section 13); the same functions serve
// the in-process surface of the mock object, and check their input with its schema: a route hands
// them the body as decoded (one check of each shape, whichever surface it came through).
import * as z from 'zod/mini';
import { ClockAdvanceRequest } from '../schemas/mock-control.js';
import { injectFault } from './faults.js';
import { invalid, json } from './http.js';
import { liveRoutes } from './live-feed.js';
import { snapshotRequests } from './request-log.js';
import { control } from './router.js';
import { createState, type MockWorld } from './state.js';
import { clickAction, createUser, installAgent, postUserMessage } from './users.js';

/**
 * Empties the state: every record, fault, log, delivery, scheduled task and open stream, and every
 * advance of the clock (PROTOCOL.md section 13: reset is the state of a new mock).
 */
export function resetWorld(world: MockWorld): void {
  world.clock.reset();
  world.streams.closeAll();
  world.state = createState(world.state.generation + 1);
  world.events.emit(() => ({ type: 'reset' }));
}

/** Moves the mock clock; due tasks run, then the live feed gets the new time. */
export async function advanceClock(world: MockWorld, seconds: number): Promise<void> {
  await world.clock.advance(seconds);
  world.events.emit(() => ({ type: 'clock', now: world.clock.now().toISOString() }));
}

/** Any JSON body: the function behind the route checks it. */
const CHECKED_BY_RULE = z.unknown();

/** The routes under `/_mock`. */
export const controlRoutes = [
  control('POST', '/_mock/users', (ctx) => json(201, createUser(ctx.world, ctx.body)), CHECKED_BY_RULE),
  control('POST', '/_mock/installs', (ctx) => json(201, installAgent(ctx.world, ctx.body)), CHECKED_BY_RULE),
  control(
    'POST',
    '/_mock/conversations/:conversation_id/user-messages',
    (ctx) =>
      json(
        201,
        postUserMessage(
          ctx.world,
          ctx.params.conversation_id ?? '',
          ctx.body,
          ctx.request.headers.get('traceparent') ?? undefined,
        ),
      ),
    CHECKED_BY_RULE,
  ),
  control(
    'POST',
    '/_mock/conversations/:conversation_id/postbacks',
    (ctx) => json(201, clickAction(ctx.world, ctx.params.conversation_id ?? '', ctx.body)),
    CHECKED_BY_RULE,
  ),
  control(
    'POST',
    '/_mock/clock/advance',
    async (ctx) => {
      try {
        await advanceClock(ctx.world, ctx.body.seconds);
      } catch (error) {
        // The schema caps one advance; the clock also refuses to pass the year 9999 (a 400 too).
        if (error instanceof RangeError) throw invalid(error.message);
        throw error;
      }
      return json(200, { now: ctx.world.clock.now().toISOString() });
    },
    ClockAdvanceRequest,
  ),
  control('GET', '/_mock/clock', (ctx) => json(200, { now: ctx.world.clock.now().toISOString() })),
  control(
    'POST',
    '/_mock/faults',
    (ctx) => json(201, injectFault(ctx.world.state, ctx.body)),
    CHECKED_BY_RULE,
  ),
  control('DELETE', '/_mock/faults', (ctx) => {
    ctx.world.state.faults.length = 0;
    return json(200, {});
  }),
  control('GET', '/_mock/deliveries', (ctx) => json(200, ctx.world.state.deliveries)),
  control('GET', '/_mock/requests', (ctx) => json(200, snapshotRequests(ctx.world.state))),
  control('POST', '/_mock/reset', (ctx) => {
    resetWorld(ctx.world);
    return json(200, {});
  }),
  ...liveRoutes,
];
