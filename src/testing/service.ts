// The mock's one entry: every request, from mock.fetch, the msw handlers or the loopback door, is
// answered here, and the checks run in the order of PROTOCOL.md section 2: log, faults,
// authentication (401), streamed-body refusal (415), size (413), shape (400), idempotent replay,
// then the rule (404, 403, 409/410, 422). The doors only translate to and from this. Routes come
// from two tables: every endpoint of SPEC.md plus the file URLs (below), and `/_mock` (control.ts).

import { readAtMost } from '../core/read-at-most.js';
import type { FaultSpec } from '../schemas/mock-control.js';
import { authenticate } from './access.js';
import { registerAgent, setWebhook } from './agents.js';
import { createAttachment, downloadFile, uploadFile } from './attachments.js';
import { checkJson, decodeJson, isNdjson, LineReader, LOGGED_BODY_CHARS, loggedBody } from './body.js';
import { controlRoutes } from './control.js';
import { createDirect, retrieveConversation } from './conversations.js';
import { takeFault } from './faults.js';
import {
  type Answer,
  errorResponse,
  invalid,
  JsonAnswer,
  MAX_BODY_BYTES,
  MockError,
  type MockRequest,
  type RequestBody,
  statusResponse,
  withHeaders,
} from './http.js';
import { beginKeyed, type KeyRecord, replayAnswer, settleKeyed } from './idempotency.js';
import { newId } from './ids.js';
import { markRead, react, sendReceipt, typing } from './interactions.js';
import { acceptInvite, createInvite } from './invites.js';
import { append, complete, listMessages, sendMessage, unsendMessage } from './messages.js';
import { logRequest } from './request-log.js';
import { matchRoute, type Route, type RouteContext } from './router.js';
import type { MockWorld } from './state.js';

/** Answers one request of the service: `/v1`, the file URLs and the control surface `/_mock`. */
export async function serveRequest(world: MockWorld, request: MockRequest): Promise<Answer> {
  let answer: Answer;
  try {
    answer = await dispatch(world, request);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const known = error instanceof MockError;
    answer = errorResponse(
      known ? error : new MockError(500, 'internal_error', `the mock service failed: ${detail}`),
    );
  }
  return withHeaders(answer, { 'request-id': newId('req') });
}

const decoder = new TextDecoder();
type Read = { text: string | undefined; bytes: number; over: boolean };
const NOT_READ: Read = { text: undefined, bytes: 0, over: false };

/**
 * The body's text, reading at most the limit and one byte (the bytes a door read, or read from its
 * stream), so a sender cannot make the mock buffer an unbounded body before it authenticates and
 * checks the size (413 once the caller is known).
 */
async function readText(body: RequestBody): Promise<Read> {
  if (body === null) return { text: '', bytes: 0, over: false };
  const { bytes, over } =
    body instanceof Uint8Array
      ? { bytes: body, over: body.byteLength > MAX_BODY_BYTES }
      : await readAtMost(body, MAX_BODY_BYTES);
  return { text: decoder.decode(bytes), bytes: bytes.byteLength, over };
}

async function dispatch(world: MockWorld, request: MockRequest): Promise<Answer> {
  const path = request.url.pathname;
  const control = path === '/_mock' || path.startsWith('/_mock/');
  const v1 = path.startsWith('/v1/');
  // A streamed body (and a file's bytes, which the rule reads) is not read here; a /v1 request is
  // logged on arrival, before any fault, with a bounded start of a large body. Faults are for the
  // service, never for the control surface.
  const ndjson = !control && isNdjson(request.headers);
  const { text, bytes, over } = (control || v1) && !ndjson ? await readText(request.body) : NOT_READ;
  const entry = v1
    ? logRequest(world, request, ndjson ? '' : bytes > 0 ? loggedBody(text!, bytes, over) : null)
    : undefined;
  const fault = control ? undefined : takeFault(world.state, request.method, path);
  if (fault?.fault === 'status') return statusResponse(fault.status, fault.code, fault.retry_after);
  const refused = ndjson && (fault?.fault === 'refuse_streamed_body' || !world.options.streamedBodies);
  const lines =
    ndjson && entry && !refused
      ? new LineReader(request.body, (chunk) => {
          // The log keeps the start of a long stream, then one mark.
          if ((entry.body ?? '').length <= LOGGED_BODY_CHARS)
            entry.body = loggedBody((entry.body ?? '') + chunk);
        })
      : undefined;
  const { route, params } = matchRoute(control ? controlRoutes : serviceRoutes, request.method, path);
  const caller = authenticate(world.state, request.headers, route.auth);
  // 415 and 413 were known before, but are answered after authentication (section 2's order).
  if (refused) {
    throw new MockError(
      415,
      'streaming_unsupported',
      'content-type: streamed (NDJSON) request bodies are not accepted here',
    );
  }
  if (over) throw new MockError(413, 'payload_too_large', `body: larger than ${MAX_BODY_BYTES} bytes`);
  // The JSON body text; undefined where the rule reads the body itself (file uploads).
  let raw = text;
  const stream = request.url.searchParams.get('stream') === 'true';
  if (lines) {
    if (!route.acceptsNdjson || !stream) {
      throw invalid(
        'content-type: application/x-ndjson is only accepted by the streaming send (?stream=true)',
      );
    }
    // The first line is the send shape; the rule reads the rest while its answer streams.
    do raw = await lines.next();
    while (raw?.trim() === '');
    raw ??= '';
  }
  const body = raw === undefined ? undefined : checkJson(route.body, decodeJson(raw));
  const ctx: RouteContext = { world, request, params, caller, body, fault, lines };
  // Keyed routes all take a credential, so a caller is known.
  let keyed: KeyRecord | undefined =
    route.retry === 'keyed'
      ? beginKeyed(world.state, caller!.id, request, { stream, body: raw ?? '' }, world.clock.nowMs())
      : undefined;
  if (keyed?.replay) return late(replayAnswer(keyed.replay, ctx), fault, undefined);
  let response: Answer;
  try {
    response = await route.handle(ctx);
  } catch (error) {
    if (keyed) settleKeyed(keyed, undefined);
    throw error;
  }
  // A stream counts as completed once message.started is written, so it is stored before any delay.
  if (keyed && ctx.replayWith) {
    settleKeyed(keyed, response.ok ? ctx.replayWith : undefined);
    keyed = undefined;
  }
  const stored = response.ok && response instanceof JsonAnswer ? response : undefined;
  return late(response, fault, keyed && (() => settleKeyed(keyed, stored)));
}

/**
 * Commits a finished answer (stores its replay); a delay fault holds it first (the key stays in
 * flight meanwhile, so a second request with it meets 409), drop_after_commit loses it after.
 */
async function late(
  response: Answer,
  fault: FaultSpec | undefined,
  commit: (() => void) | undefined,
): Promise<Answer> {
  if (fault?.fault === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.delay_ms));
  commit?.();
  if (fault?.fault !== 'drop_after_commit') return response;
  if (response instanceof Response) await response.body?.cancel().catch(() => undefined);
  return Response.error();
}

/** The routes of `/v1` and of the upload and download URLs. */
export const serviceRoutes: readonly Route[] = [
  registerAgent,
  setWebhook,
  createAttachment,
  // `direct` before `:conversation_id`, so the literal path wins.
  createDirect,
  retrieveConversation,
  sendMessage,
  listMessages,
  typing,
  sendReceipt,
  markRead,
  react,
  append,
  complete,
  unsendMessage,
  createInvite,
  acceptInvite,
  uploadFile,
  downloadFile,
];
