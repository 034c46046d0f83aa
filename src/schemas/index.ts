// One zod schema per wire shape, in the wire's own casing; the client, the mock and the tests share them.
export * from './agents.js';
export * from './attachments.js';
export * from './common.js';
export * from './conversations.js';
export * from './errors.js';
export * from './invites.js';
export * from './issue-messages.js';
export * from './issues.js';
export * from './messages.js';
export * from './stream.js';
export * from './webhooks.js';
