// Shared test helpers: a JSON client over plain fetch, a recording webhook receiver, and a
// scenario with a verified agent, a user who installed it, and their conversation.

import { schemas } from 'agent-messaging';
import type { MockService } from 'agent-messaging/testing';
import type * as z from 'zod/mini';
// Private: the SDK's wording of a schema issue, which the mock's error messages use.
import { issueMessage } from '../../src/schemas/issue-messages.js';

// The wire schemas as values, from the public namespace.
const { ErrorBody } = schemas;

/** One answer, with its parsed JSON body (or the text when not JSON). */
export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** Options of one call. */
export interface CallOptions {
  token?: string;
  body?: unknown;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

/** A client that calls `baseUrl` with the global fetch, the way an SDK would. */
export function client(baseUrl: string) {
  return async (method: string, path: string, options: CallOptions = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body:
        options.body === undefined
          ? undefined
          : typeof options.body === 'string'
            ? options.body
            : JSON.stringify(options.body),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: keep the text.
    }
    return { status: response.status, headers: response.headers, body };
  };
}

/** A call function as made by {@link client}. */
export type Call = ReturnType<typeof client>;

/** Parses a body with a shared response schema; a mismatch fails the test naming the field. */
export function parse<S extends z.ZodMiniType>(schema: S, body: unknown): z.output<S> {
  return schema.parse(body, { error: issueMessage });
}

/** The error code of an error answer. */
export function errorOf(answer: Answer): { code: string; message: string } {
  return ErrorBody.parse(answer.body).error;
}

/** One webhook delivery as the receiver saw it. */
export interface Received {
  url: string;
  headers: Record<string, string>;
  body: string;
  json: { type: string; eventId: string; [key: string]: unknown };
}

/** A webhook endpoint for the mock's `fetch` option; answers `status` (a number or a function). */
export class WebhookReceiver {
  readonly received: Received[] = [];
  status: number | ((received: Received) => number | Promise<number>) = 204;

  readonly fetch = async (request: Request): Promise<Response> => {
    const body = await request.text();
    const headers = Object.fromEntries(request.headers);
    const received: Received = { url: request.url, headers, body, json: JSON.parse(body) };
    this.received.push(received);
    const status = typeof this.status === 'number' ? this.status : await this.status(received);
    return new Response(null, { status });
  };

  /** The deliveries of one event type. */
  ofType(type: string): Received[] {
    return this.received.filter((item) => item.json.type === type);
  }
}

/** A send body with one text block. */
export function textSend(text: string, extra: Record<string, unknown> = {}) {
  return { schema: 'svc.agent-send.v1', content: [{ type: 'text', text }], ...extra };
}

let keyCounter = 0;
/** A fresh valid Idempotency-Key. */
export function newKey(): string {
  keyCounter += 1;
  return `test-key-${keyCounter}-${Math.random().toString(36).slice(2)}`;
}

/** What {@link setupScenario} made. */
export interface Scenario {
  agentId: string;
  apiKey: string;
  webhookSecret: string;
  userId: string;
  sessionToken: string;
  conversationId: string;
}

/** An agent whose webhook the mock verified with a signed webhook.test, and a new user who installed it. */
export async function setupScenario(mock: MockService, handle = 'helper_bot'): Promise<Scenario> {
  const seed = await mock.seed({
    handle,
    webhookUrl: 'https://bot.example/hook',
    capabilities: ['text'],
    verifyWebhook: true,
  });
  return {
    agentId: seed.agent.id,
    apiKey: seed.apiKey,
    webhookSecret: seed.webhookSecret,
    userId: seed.user.id,
    sessionToken: seed.sessionToken,
    conversationId: seed.conversationId,
  };
}
