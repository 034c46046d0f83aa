import {
  AgentMessagingError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  GoneError,
  InternalServerError,
  InvalidResponseError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  TimeoutError,
  UnprocessableEntityError,
  ValidationError,
  WebhookVerificationError,
} from 'agent-messaging';
import { HttpResponse, http } from 'msw';
import { describe, expect, test } from 'vitest';
// Private: createApiError is the SDK's status-to-class factory, tested here directly; the module is
// also loaded a second time to stand for a duplicate copy of the package.
import type * as apiErrors from '../../src/core/api-error.js';
import { createApiError } from '../../src/core/api-error.js';
import { rejectionOf, useWorld } from './world.js';

describe('answers the client cannot read', () => {
  const w = useWorld('msw');
  const conversationUrl = () => `${w.mock.baseUrl}/v1/conversations/:id`;

  test('an answer of the wrong shape is an InvalidResponseError naming the fields', async () => {
    w.server?.use(
      http.get(conversationUrl(), () =>
        HttpResponse.json({ conversation: { id: 7, title: 'x' } }, { headers: { 'request-id': 'req_bad' } }),
      ),
    );

    const error = await rejectionOf(w.client.conversations.retrieve(w.conversationId));

    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ status: 200, requestId: 'req_bad' });
    const fields = (error as InvalidResponseError).issues.map((issue) => issue.field);
    expect(fields).toEqual(expect.arrayContaining(['conversation.id', 'conversation.participant_count']));
    expect((error as Error).message).toContain('conversations.retrieve');
  });

  test('an answer that is not JSON is an InvalidResponseError', async () => {
    w.server?.use(http.get(conversationUrl(), () => HttpResponse.text('<html>hello</html>')));

    const error = await rejectionOf(w.client.conversations.retrieve(w.conversationId));

    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).issues).toEqual([]);
  });

  test('fields the schema does not name are kept, at every depth', async () => {
    const conversation = {
      id: w.conversationId,
      participant_count: 2,
      last_sequence: 0,
      created_at: '2026-01-01T00:00:00Z',
      counterpart_user: { id: 'usr_1', display_name: 'Ann', pronouns: 'she' },
      pinned: true,
    };
    w.server?.use(http.get(conversationUrl(), () => HttpResponse.json({ conversation, cursor: 'c1' })));

    const answer = await w.client.conversations.retrieve(w.conversationId);

    expect(answer).toEqual({ conversation, cursor: 'c1' });
  });

  test('an error answer without the service error shape keeps its status, with no code', async () => {
    w.server?.use(http.get(conversationUrl(), () => new HttpResponse('Bad gateway', { status: 502 })));

    const error = await rejectionOf(w.client.conversations.retrieve(w.conversationId, { maxRetries: 0 }));

    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 502, code: undefined });
    expect((error as Error).message).toContain('502');
  });

  test('an error message that echoes the token is redacted', async () => {
    w.server?.use(
      http.get(conversationUrl(), () =>
        HttpResponse.json(
          { error: { code: 'unauthorized', message: `unknown token ${w.apiKey}` } },
          { status: 401 },
        ),
      ),
    );

    const error = await rejectionOf(w.client.conversations.retrieve(w.conversationId));

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('unknown token ***');
    expect(JSON.stringify(error) + (error as Error).message).not.toContain(w.apiKey);
    expect(JSON.stringify(w.lines)).not.toContain(w.apiKey);
  });

  test('an ApiError carries the answer headers and Request-Id', async () => {
    const error = (await rejectionOf(w.client.conversations.retrieve('cnv_missing'))) as ApiError;

    expect(error.requestId).toMatch(/^req_/);
    expect(error.headers['request-id']).toBe(error.requestId);
    expect(error.message).toMatch(/^404 not_found: .+ \(request req_[\w-]+\)$/);
  });
});

describe('the error family', () => {
  const init = { message: 'no', requestId: 'req_1' };

  test.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [410, GoneError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
    [418, ApiError],
  ] as const)('status %i becomes %o', (status, ErrorClass) => {
    const error = createApiError({ ...init, status });

    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.constructor).toBe(ErrorClass);
    expect(error.name).toBe(ErrorClass.name);
    expect(ErrorClass.is(error)).toBe(true);
    expect(ApiError.is(error)).toBe(true);
    expect(AgentMessagingError.is(error)).toBe(true);
  });

  test('guards tell the classes apart', () => {
    const notFound = createApiError({ ...init, status: 404 });
    const invalid = new ValidationError([{ field: 'title', message: 'bad' }]);

    expect(NotFoundError.is(createApiError({ ...init, status: 500 }))).toBe(false);
    expect(ValidationError.is(notFound)).toBe(false);
    expect(ApiError.is(invalid)).toBe(false);
    expect(TimeoutError.is(new ConnectionError('x'))).toBe(false);
    expect(AgentMessagingError.is(new Error('plain'))).toBe(false);
    expect(AgentMessagingError.is(new WebhookVerificationError('invalid_body', 'x'))).toBe(true);
    expect(ApiError.is(null)).toBe(false);
  });

  test('guards recognise errors made by another copy of the package', async () => {
    // A second instance of the module, as a duplicate install or a second bundle would load it.
    const path = '../../src/core/api-error.js?duplicate';
    const copy = (await import(/* @vite-ignore */ path)) as typeof apiErrors;
    expect(copy.NotFoundError).not.toBe(NotFoundError);
    const foreign = copy.createApiError({ ...init, status: 404 });

    expect(foreign instanceof NotFoundError).toBe(false);
    expect(NotFoundError.is(foreign)).toBe(true);
    expect(ApiError.is(foreign)).toBe(true);
    expect(AgentMessagingError.is(foreign)).toBe(true);
    expect(RateLimitError.is(foreign)).toBe(false);
  });

  test('RateLimitError keeps retryAfter in seconds', () => {
    const error = createApiError({ ...init, status: 429, retryAfter: 30 });

    expect(RateLimitError.is(error) && error.retryAfter).toBe(30);
  });
});
