// The zod schemas of the mock's control surface and live feed, for tests that drive `/_mock` over HTTP.
export * from '../schemas/mock-control.js';
export * from '../schemas/mock-events.js';
