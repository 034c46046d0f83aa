// Reading the service's answers: a 2xx body against its schema, an error body into the typed ApiError.

import type * as z from 'zod/mini';
import { ErrorBody } from '../schemas/errors.js';
import { fieldIssues, safeParse } from '../schemas/issues.js';
import { type ApiError, createApiError } from './api-error.js';
import type { WithResponse } from './api-promise.js';
import { InvalidResponseError } from './errors.js';
import { parseRetryAfter } from './retry.js';

/** Replaces every occurrence of the credential, so no text the SDK shows can carry it. @internal */
export function redact(text: string, secret: string | undefined): string {
  return secret && text.includes(secret) ? text.replaceAll(secret, '***') : text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The typed ApiError for a non-2xx answer whose body has been read as `text`. @internal */
export function errorFromAnswer(response: Response, text: string, secret: string | undefined): ApiError {
  const headers = Object.fromEntries(response.headers);
  const parsed = ErrorBody.safeParse(parseJson(text));
  const message = parsed.success
    ? parsed.data.error.message
    : `the service answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  return createApiError({
    status: response.status,
    code: parsed.success ? parsed.data.error.code : undefined,
    message: redact(message, secret),
    requestId: headers['request-id'],
    headers,
    retryAfter: parseRetryAfter(headers['retry-after']),
  });
}

/** Parses a 2xx JSON answer with its schema; anything else is an InvalidResponseError. @internal */
export function parseJsonAnswer<S extends z.ZodMiniType>(
  schema: S,
  response: Response,
  text: string,
  call: { operation: string },
): WithResponse<z.output<S>> {
  const requestId = response.headers.get('request-id') ?? undefined;
  const body = parseJson(text);
  if (body === undefined) {
    throw new InvalidResponseError(
      `${call.operation}: the service answered ${response.status} with a body that is not JSON.`,
      {
        status: response.status,
        requestId,
      },
    );
  }
  const result = safeParse(schema, body);
  if (!result.success) {
    const issues = fieldIssues(result.error);
    const list = issues.map(({ field, message }) => `${field || 'body'}: ${message}`).join('; ');
    throw new InvalidResponseError(
      `${call.operation}: the answer does not have the expected shape (${list}).`,
      {
        status: response.status,
        requestId,
        issues,
      },
    );
  }
  return { data: result.data, response, requestId };
}
