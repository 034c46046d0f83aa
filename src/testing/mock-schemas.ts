// The `mockSchemas` export of `agent-messaging/testing`: the zod schema of each wire shape of the mock's
// control surface and live feed, by the name of its type, for tests that drive `/_mock` over HTTP.
export * from '../schemas/mock-control.js';
export {
  MockAgent,
  MockAttachment,
  MockConversation,
  MockEvent,
  MockInvite,
  MockStateSnapshot,
  MockUser,
} from '../schemas/mock-events.js';
