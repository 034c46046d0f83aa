// `agent-messaging/node`: the bot on node:http and Express. toNodeHandler reads the raw body (a
// signature covers the exact bytes), hands it to `bot.handleDelivery` with the headers and writes the
// answer back; toNodeFetchHandler does the same for any Web-standard fetch handler (a Hono app, the
// Chat SDK's webhook) through a Request and a Response.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, toRequest, UnbridgeableRequest, writeError, writeResponse } from './node-bridge.js';
import type { Bot } from './webhooks/bot-types.js';
import { type DeliveryAnswer, NOT_POST } from './webhooks/delivery.js';
import { MAX_DELIVERY_BYTES } from './webhooks/verify.js';

/** What {@link toNodeHandler} serves: a bot of `createBot`, or anything with its `handleDelivery`. */
export type DeliveryHandler = Pick<Bot, 'handleDelivery'>;

/** What {@link toNodeFetchHandler} serves: anything with a Web-standard `fetch(request)`. */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

/** Options of {@link toNodeHandler} and {@link toNodeFetchHandler}. */
export interface NodeHandlerOptions {
  /**
   * Largest body read, in bytes; a bigger one is answered 413. 1 MiB by default, the service's own
   * limit; the bot refuses more than 1 MiB itself, so only a smaller value changes anything.
   */
  maxBodyBytes?: number;
}

/** A node:http request handler, also usable as Express middleware (`next` receives unexpected errors). */
export type NodeHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => Promise<void>;

const PARSED_BODY_MESSAGE =
  'The webhook body was already parsed by a body parser, so its signature can no longer be checked. ' +
  "Mount express.raw({ type: 'application/json' }) on the webhook route instead of express.json(), " +
  'or mount the bot before any body parser.';

/**
 * The raw body: what a raw or text body parser left in `req.body`, else the unread stream (up to the
 * limit). `undefined` once a 400 (a parser consumed the stream and left only a parsed object) or a
 * 413 (over the limit) was written instead.
 */
async function rawBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<Buffer | undefined> {
  const parsed: unknown = (req as { body?: unknown }).body;
  let bytes: Buffer | undefined;
  if (parsed instanceof Uint8Array || typeof parsed === 'string') {
    bytes =
      typeof parsed === 'string'
        ? Buffer.from(parsed)
        : Buffer.from(parsed.buffer, parsed.byteOffset, parsed.byteLength);
  } else if (parsed != null && ((req as { _body?: unknown })._body === true || req.readableEnded)) {
    // A body parser consumed the stream (body-parser marks that with `_body`): only its object is left.
    writeError(res, 400, 'body_already_parsed', PARSED_BODY_MESSAGE);
    return undefined;
  } else {
    const read = await readBody(req, limit);
    if (read.complete) return read.bytes;
  }
  if (bytes !== undefined && bytes.byteLength <= limit) return bytes;
  // The rest is never read: the connection closes after the answer instead.
  res.shouldKeepAlive = false;
  writeError(res, 413, 'payload_too_large', `the body is over ${limit} bytes`);
  return undefined;
}

/**
 * A node:http handler that reads the raw body (a 400 or a 413 written instead when it cannot) and
 * hands it to `serve`. An unexpected error goes to `next` under Express, else is a bare 500.
 */
function nodeHandler(
  { maxBodyBytes = MAX_DELIVERY_BYTES }: NodeHandlerOptions,
  serve: (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>,
): NodeHandler {
  return async (req, res, next) => {
    try {
      const body = await rawBody(req, res, maxBodyBytes);
      if (body !== undefined) await serve(req, res, body);
    } catch (error) {
      if (next) return next(error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
}

/**
 * Serves a bot on node:http or Express, reading the raw body itself: each POST goes to
 * `bot.handleDelivery` with its headers, and its answer is written back as it is.
 *
 * @example
 * http.createServer(toNodeHandler(bot)).listen(3000);
 * app.post('/webhook', toNodeHandler(bot));            // Express: no express.json() before it
 */
export function toNodeHandler(bot: DeliveryHandler, options: NodeHandlerOptions = {}): NodeHandler {
  return nodeHandler(options, async (req, res, body) => {
    const answer: DeliveryAnswer =
      req.method === 'POST' ? await bot.handleDelivery(body, req.headers) : NOT_POST;
    // Head and body in one write.
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
}

/**
 * Serves any Web-standard fetch handler (a Hono app, the Chat SDK's `chat.webhooks.agentMessaging`)
 * on node:http or Express: the request becomes a Fetch `Request` with its raw body, the `Response`
 * is written back (an event stream as it comes). For a bot of `createBot`, {@link toNodeHandler}.
 *
 * @example
 * http.createServer(toNodeFetchHandler({ fetch: (request) => chat.webhooks.agentMessaging(request) }));
 */
export function toNodeFetchHandler(handler: FetchHandler, options: NodeHandlerOptions = {}): NodeHandler {
  return nodeHandler(options, async (req, res, body) => {
    let request: Request;
    try {
      request = toRequest(req, body);
    } catch (error) {
      if (!(error instanceof UnbridgeableRequest)) throw error;
      // Never a 500: the sender would retry a request that can never succeed.
      const code = error.status === 405 ? 'method_not_allowed' : 'bad_request';
      return writeError(res, error.status, code, error.message);
    }
    await writeResponse(res, await handler.fetch(request));
  });
}
