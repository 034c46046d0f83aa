// `agent-messaging/node`: the bot on node:http and Express. The bot's core speaks Web Request/Response;
// this adapter reads the raw body (a signature covers the exact bytes) and writes the answer back.

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  originOf,
  type ReadBody,
  readBody,
  toRequest,
  UnbridgeableRequest,
  writeError,
  writeResponse,
} from './node-bridge.js';
import { DELIVER, type DeliverDoor, type DeliveryAnswer } from './webhooks/delivery.js';

/** Anything with a Web-standard `fetch(request)`, such as the bot of `createBot`. */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>;
}

/** Options of {@link toNodeHandler}. */
export interface NodeHandlerOptions {
  /**
   * Largest body read, in bytes; a bigger one is answered 413. 1 MiB by default, the service's own
   * limit; `bot.fetch` refuses more than 1 MiB itself, so only a smaller value changes anything.
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
 * limit). `undefined` when a parser consumed the stream and left only a parsed object.
 */
async function rawBody(req: IncomingMessage, limit: number): Promise<ReadBody | undefined> {
  const parsed: unknown = (req as { body?: unknown }).body;
  if (parsed instanceof Uint8Array || typeof parsed === 'string') {
    const bytes =
      typeof parsed === 'string'
        ? Buffer.from(parsed)
        : Buffer.from(parsed.buffer, parsed.byteOffset, parsed.byteLength);
    return bytes.byteLength > limit ? { complete: false, head: [bytes] } : { complete: true, bytes };
  }
  // body-parser marks what it consumed with `_body`; an untouched stream can still be read here.
  const consumed = (req as { _body?: unknown })._body === true || req.readableEnded;
  if (parsed !== undefined && parsed !== null && consumed) return undefined;
  return readBody(req, limit);
}

/** The headers of a node:http request as the delivery reads them (names are lowercase there). */
class NodeHeaders {
  constructor(private readonly headers: IncomingMessage['headers']) {}

  get(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/** Writes a delivery's JSON answer, its head (made once per answer) and body in one write. */
function writeAnswer(res: ServerResponse, answer: DeliveryAnswer): void {
  res.writeHead(answer.status, answer.head as string[]);
  res.end(answer.body);
}

/**
 * Serves a bot on node:http or Express, reading the raw body itself.
 *
 * @example
 * http.createServer(toNodeHandler(bot)).listen(3000);
 * app.post('/webhook', toNodeHandler(bot));            // Express: no express.json() before it
 */
export function toNodeHandler(bot: FetchHandler, options: NodeHandlerOptions = {}): NodeHandler {
  const { maxBodyBytes = 1024 * 1024 } = options;
  // A bot of createBot takes the bytes and headers read here directly (no Request, no Response);
  // any other fetch handler, a bot whose fetch was replaced, and any method but POST go through Fetch.
  const door = (bot as { [DELIVER]?: DeliverDoor })[DELIVER];
  // The last Host and target that made a URL: a server sees the same one on every delivery.
  let knownHost: string | undefined;
  let knownUrl: string | undefined;
  return async (req, res, next) => {
    try {
      const body = await rawBody(req, maxBodyBytes);
      if (body === undefined) return writeError(res, 400, 'body_already_parsed', PARSED_BODY_MESSAGE);
      if (!body.complete) {
        // The rest is never read: the connection closes after the answer instead.
        res.shouldKeepAlive = false;
        return writeError(res, 413, 'payload_too_large', `the body is over ${maxBodyBytes} bytes`);
      }
      let request: Request;
      try {
        const url = req.url ?? '';
        const direct = door && bot.fetch === door.fetch && req.method === 'POST' && url.startsWith('/');
        const { host } = req.headers;
        if (direct && host !== undefined && host === knownHost && url === knownUrl) {
          return writeAnswer(res, await door.deliver(body.bytes, new NodeHeaders(req.headers)));
        }
        const origin = originOf(req);
        // What Fetch could not make a URL of (a bad port, a broken IPv6 host) is refused below by toRequest.
        if (direct && URL.canParse(origin + url)) {
          knownHost = host;
          knownUrl = url;
          return writeAnswer(res, await door.deliver(body.bytes, new NodeHeaders(req.headers)));
        }
        request = toRequest(req, origin, body.bytes);
      } catch (error) {
        if (!(error instanceof UnbridgeableRequest)) throw error;
        // Never a 500: the sender would retry a delivery that can never succeed.
        return writeError(
          res,
          error.status,
          error.status === 405 ? 'method_not_allowed' : 'bad_request',
          error.message,
        );
      }
      await writeResponse(res, await bot.fetch(request));
    } catch (error) {
      if (next) return next(error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
}
