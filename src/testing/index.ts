// `agent-messaging/testing`: the whole service in memory, in process or on a real port; its msw
// handlers are in `agent-messaging/testing/msw`, so nothing here needs msw (an optional peer).

export type { MockEventType } from '../schemas/mock-events.js';
export { generateWebhookSecret, type SignedHeaders, signWebhook } from '../webhooks/verify.js';
export {
  createFakeModelServer,
  type FakeModelApi,
  type FakeModelReply,
  type FakeModelRequest,
  type FakeModelServer,
  type FakeModelServerOptions,
  type FakeModelTurn,
  type FakeToolCall,
} from './fake-model-server.js';
export type { MockEventListener, MockEvents } from './live-feed.js';
export type * from './mock-schemas.js';
export * as mockSchemas from './mock-schemas.js';
export type {
  MockClockControl,
  MockFaults,
  MockServer,
  MockService,
  MockServiceOptions,
} from './mock-service.js';
export { createMockService } from './mock-service.js';
export type { Seed, SeedOptions } from './seed.js';
