// The mock's one entry: every request, from mock.fetch, the msw handlers or the loopback door, is
// answered here, and the checks run in the order of PROTOCOL.md section 2: log, faults,
// authentication (401), streamed-body refusal (415), size (413), shape (400), idempotent replay,
// then the rule (404, 403, 409/410, 422). The doors only translate to and from this. Routes come
// from two tables: every endpoint of SPEC.md plus the file URLs (below), and `/_mock` (control.ts).
import { readAtMost } from '../webhooks/capped-body.js';
import { type AuthKind, authenticate } from './access.js';
import { registerAgent, setWebhook } from './agents.js';
import { createAttachment, downloadFile, uploadFile } from './attachments.js';
import { checkJson, decodeJson, isNdjson, LineReader, LOGGED_BODY_CHARS, loggedBody } from './body.js';
import { controlRoutes } from './control.js';
import { createDirect, retrieveConversation } from './conversations.js';
import { type Fault, takeFault } from './faults.js';
import {
  type Answer,
  bodyStream,
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
import {
  beginIdempotent,
  idempotencyKeyOf,
  idempotencyScope,
  type Reservation,
  replayAnswer,
  snapshotReplay,
  storedJson,
} from './idempotency.js';
import { newId } from './ids.js';
import { markRead, react, sendReceipt, typing } from './interactions.js';
import { acceptInvite, createInvite } from './invites.js';
import { requestLogged } from './live-feed.js';
import { append, complete, listMessages, sendMessage, unsendMessage } from './messages.js';
import { logRequest } from './request-log.js';
import { matchRoute, type Route, type RouteContext } from './router.js';
import type { MockWorld } from './state.js';

/** Answers one request of the service: `/v1`, the file URLs and the control surface `/_mock`. */
export async function serveRequest(world: MockWorld, request: MockRequest): Promise<Answer> {
  const requestId = newId('req');
  let answer: Answer;
  try {
    answer = await dispatch(world, request);
  } catch (error) {
    answer = errorResponse(error instanceof MockError ? error : internalError(error));
  }
  return withHeaders(answer, { 'request-id': requestId });
}

const tooLarge = () => new MockError(413, 'payload_too_large', `body: larger than ${MAX_BODY_BYTES} bytes`);

function internalError(error: unknown): MockError {
  const detail = error instanceof Error ? error.message : String(error);
  return new MockError(500, 'internal_error', `the mock service failed: ${detail}`);
}

const NO_BYTES = new Uint8Array(0);

/**
 * At most the limit and one byte of the body (the bytes a door read, or read from its stream), so a
 * sender cannot make the mock buffer an unbounded body before it authenticates and checks the size.
 */
function readCapped(body: RequestBody): { bytes: Uint8Array; over: boolean } | ReturnType<typeof readAtMost> {
  if (body === null) return { bytes: NO_BYTES, over: false };
  if (body instanceof Uint8Array) return { bytes: body, over: body.byteLength > MAX_BODY_BYTES };
  return readAtMost(body, MAX_BODY_BYTES);
}

const decoder = new TextDecoder();

async function dispatch(world: MockWorld, request: MockRequest): Promise<Answer> {
  const { url } = request;
  const path = url.pathname;
  if (path === '/_mock' || path.startsWith('/_mock/')) {
    // At most the limit and one byte is read; 413 once the caller is authenticated, as on /v1.
    const { bytes, over } = await readCapped(request.body);
    const text = over ? undefined : decoder.decode(bytes);
    return run(world, controlRoutes, request, {
      text,
      fault: undefined,
      lines: undefined,
      early: over ? tooLarge() : undefined,
    });
  }
  const ndjson = isNdjson(request.headers);
  let bytes: Uint8Array | undefined;
  let over = false;
  let decoded: string | undefined;
  let entry: { body: string | null } | undefined;
  if (path.startsWith('/v1/')) {
    // Recorded on arrival, before any fault; a streamed body fills in as its lines are read. At most
    // the limit and one byte is read, and the log keeps a bounded start of a large body.
    if (!ndjson) ({ bytes, over } = await readCapped(request.body));
    decoded = bytes && bytes.byteLength > 0 ? decoder.decode(bytes) : undefined;
    const text = decoded === undefined ? null : loggedBody(decoded, bytes?.byteLength, over);
    const logged = logRequest(world.state, request, url, ndjson ? '' : text);
    requestLogged(world, logged);
    entry = logged;
  }
  const fault = takeFault(world.state, request.method, path);
  if (fault?.fault === 'status') return statusResponse(fault.status, fault.code, fault.retry_after);
  const refused = ndjson && (fault?.fault === 'refuse_streamed_body' || !world.options.streamedBodies);
  // 415 and 413 are known now but answered after authentication (section 2's order).
  const early = refused
    ? new MockError(
        415,
        'streaming_unsupported',
        'content-type: streamed (NDJSON) request bodies are not accepted here',
      )
    : over
      ? tooLarge()
      : undefined;
  const lines =
    ndjson && entry && !refused
      ? new LineReader(bodyStream(request.body), (chunk) => {
          // The log keeps the start of a long stream, then one mark.
          const logged = entry?.body ?? '';
          if (entry && logged.length <= LOGGED_BODY_CHARS) entry.body = loggedBody(logged + chunk);
        })
      : undefined;
  const text = bytes && !over ? (decoded ?? '') : undefined;
  return run(world, serviceRoutes, request, { text, fault, lines, early });
}

interface Input {
  /** The JSON body text; undefined where the rule reads the body itself (file uploads). */
  text: string | undefined;
  fault: Fault | undefined;
  lines: LineReader | undefined;
  /** A refusal due once the caller is authenticated: 415 for a refused streamed body, 413 for size. */
  early?: MockError | undefined;
}

async function run(
  world: MockWorld,
  routes: readonly Route[],
  request: MockRequest,
  input: Input,
): Promise<Answer> {
  const { url } = request;
  const { route, params } = matchRoute(routes, request.method, url.pathname);
  const caller = authenticate(world.state, request.headers, route.auth as AuthKind);
  if (input.early) throw input.early;
  let raw = input.text;
  const streaming = url.search !== '' && url.searchParams.get('stream') === 'true';
  if (input.lines) {
    if (!route.acceptsNdjson || !streaming) {
      throw invalid(
        'content-type: application/x-ndjson is only accepted by the streaming send (?stream=true)',
      );
    }
    // The first line is the send shape; the rule reads the rest while its answer streams.
    raw = (await input.lines.nextNonBlank()) ?? '';
  }
  const body = parseBody(route, raw);
  const key = route.retry === 'keyed' ? idempotencyKeyOf(request.headers) : undefined;
  const ctx: RouteContext = {
    world,
    request,
    url,
    params,
    caller,
    body,
    origin: url.origin,
    fault: input.fault,
    lines: input.lines,
  };
  let reservation: Reservation | undefined;
  if (key !== undefined && caller) {
    const scope = idempotencyScope(caller.id, request.method, url.pathname);
    const print = { stream: streaming, body: raw ?? '' };
    const begun = beginIdempotent(world.state, scope, key, print, world.clock.nowMs());
    if ('replay' in begun) {
      return answer(
        withHeaders(replayAnswer(begun.replay, ctx), { 'idempotent-replayed': 'true' }),
        input.fault,
        undefined,
      );
    }
    reservation = begun.reservation;
  }
  let response: Answer;
  try {
    response = await route.handle(ctx);
  } catch (error) {
    reservation?.release();
    throw error;
  }
  // A stream counts as completed once message.started is written, so it is stored before any delay.
  if (reservation && ctx.replayWith) {
    if (response.ok) reservation.store(ctx.replayWith);
    else reservation.release();
    reservation = undefined;
  }
  // A JSON answer is stored at once; only a Response's body is read (and waited for).
  const stored =
    reservation && response.ok
      ? response instanceof JsonAnswer
        ? storedJson(response)
        : await snapshotReplay(response)
      : undefined;
  return answer(response, input.fault, () => {
    if (!reservation) return;
    if (stored) reservation.store(stored);
    else reservation.release();
  });
}

/** Commits a finished answer; with a delay or drop_after_commit fault, through {@link answerLate}. */
function answer(
  response: Answer,
  fault: Fault | undefined,
  commit: (() => void) | undefined,
): Answer | Promise<Answer> {
  if (fault?.fault === 'delay' || fault?.fault === 'drop_after_commit')
    return answerLate(response, fault, commit);
  commit?.();
  return response;
}

/** Applies the delay and drop_after_commit faults to a finished answer. */
async function answerLate(
  response: Answer,
  fault: Fault | undefined,
  commit: (() => void) | undefined,
): Promise<Answer> {
  // The key stays in flight during a delay, so a second request with it meets 409.
  if (fault?.fault === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.delay_ms));
  commit?.();
  if (fault?.fault === 'drop_after_commit') {
    if (response instanceof Response) await response.body?.cancel().catch(() => undefined);
    return Response.error();
  }
  return response;
}

function parseBody(route: Route, raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  const value = decodeJson(raw);
  if (route.body) return checkJson(route.body, value);
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length > 0) {
    throw invalid('body: this endpoint takes no body');
  }
  return undefined;
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
