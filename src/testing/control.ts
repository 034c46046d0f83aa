// The control surface over HTTP under /_mock (PROTOCOL.md section 13); the same functions serve
// the in-process surface of the mock object.
import {
  ClickActionRequest,
  ClockAdvanceRequest,
  CreateUserRequest,
  FaultSpec,
  InstallRequest,
  UserMessageRequest,
} from '../schemas/mock-control.js';
import { clearFaults, injectFault } from './faults.js';
import { invalid, json } from './http.js';
import { clockAdvanced, stateReset } from './live-events.js';
import { liveRoutes } from './live-routes.js';
import { clickAction } from './postbacks.js';
import { snapshotRequests } from './request-log.js';
import { route } from './router.js';
import { createState } from './state.js';
import { createUser, installAgent, postUserMessage } from './users.js';
import { iso, type MockWorld } from './world.js';

/**
 * Empties the state: every record, fault, log, delivery, scheduled task and open stream, and every
 * advance of the clock (PROTOCOL.md section 13: reset is the state of a new mock).
 */
export function resetWorld(world: MockWorld): void {
  world.clock.clearTasks();
  world.clock.rewind();
  world.streams.closeAll();
  world.state = createState(world.state.generation + 1);
  stateReset(world);
}

/** Moves the mock clock; due tasks run, then the live feed gets the new time. */
export async function advanceClock(world: MockWorld, seconds: number): Promise<void> {
  await world.clock.advance(seconds);
  clockAdvanced(world);
}

/** The routes under `/_mock`. */
export const controlRoutes = [
  route({
    method: 'POST',
    path: '/_mock/users',
    auth: 'none',
    body: CreateUserRequest,
    handle: (ctx) => json(201, createUser(ctx.world, ctx.body)),
  }),
  route({
    method: 'POST',
    path: '/_mock/installs',
    auth: 'none',
    body: InstallRequest,
    handle: (ctx) => json(201, installAgent(ctx.world, ctx.body)),
  }),
  route({
    method: 'POST',
    path: '/_mock/conversations/:conversation_id/user-messages',
    auth: 'none',
    body: UserMessageRequest,
    handle: (ctx) => json(201, postUserMessage(ctx.world, ctx.params.conversation_id ?? '', ctx.body)),
  }),
  route({
    method: 'POST',
    path: '/_mock/conversations/:conversation_id/postbacks',
    auth: 'none',
    body: ClickActionRequest,
    handle: (ctx) => json(201, clickAction(ctx.world, ctx.params.conversation_id ?? '', ctx.body)),
  }),
  route({
    method: 'POST',
    path: '/_mock/clock/advance',
    auth: 'none',
    body: ClockAdvanceRequest,
    handle: async (ctx) => {
      try {
        await advanceClock(ctx.world, ctx.body.seconds);
      } catch (error) {
        // The schema caps one advance; the clock also refuses to pass the year 9999 (a 400 too).
        if (error instanceof RangeError) throw invalid(error.message);
        throw error;
      }
      return json(200, { now: iso(ctx.world.clock.now()) });
    },
  }),
  route({
    method: 'GET',
    path: '/_mock/clock',
    auth: 'none',
    handle: (ctx) => json(200, { now: iso(ctx.world.clock.now()) }),
  }),
  route({
    method: 'POST',
    path: '/_mock/faults',
    auth: 'none',
    body: FaultSpec,
    handle: (ctx) => json(201, injectFault(ctx.world.state, ctx.body)),
  }),
  route({
    method: 'DELETE',
    path: '/_mock/faults',
    auth: 'none',
    handle: (ctx) => {
      clearFaults(ctx.world.state);
      return json(200, {});
    },
  }),
  route({
    method: 'GET',
    path: '/_mock/deliveries',
    auth: 'none',
    handle: (ctx) => json(200, ctx.world.state.deliveries),
  }),
  route({
    method: 'GET',
    path: '/_mock/requests',
    auth: 'none',
    handle: (ctx) => json(200, snapshotRequests(ctx.world.state)),
  }),
  route({
    method: 'POST',
    path: '/_mock/reset',
    auth: 'none',
    handle: (ctx) => {
      resetWorld(ctx.world);
      return json(200, {});
    },
  }),
  ...liveRoutes,
];
