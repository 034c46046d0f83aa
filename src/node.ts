// `agent-messaging/node`: the bot on node:http and Express. The bot's core speaks Web Request/Response;
// this adapter reads the raw body (a signature covers the exact bytes) and writes the answer back.

import type { IncomingMessage, ServerResponse } from 'node:http';

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

class BodyTooLarge extends Error {}

async function readStream(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : (chunk as Uint8Array);
    size += bytes.byteLength;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/**
 * The raw body: what a raw or text body parser left in `req.body`, else the unread stream.
 * `undefined` when a parser consumed the stream and left only a parsed object.
 */
async function rawBody(req: IncomingMessage, limit: number): Promise<Uint8Array | string | undefined> {
  const parsed: unknown = (req as { body?: unknown }).body;
  if (parsed instanceof Uint8Array || typeof parsed === 'string') return parsed;
  // body-parser marks what it consumed with `_body`; an untouched stream can still be read here.
  const consumed = (req as { _body?: unknown })._body === true || req.readableEnded;
  if (parsed !== undefined && parsed !== null && consumed) return undefined;
  return readStream(req, limit);
}

function toRequest(req: IncomingMessage, body: Uint8Array | string): Request {
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const url = new URL(req.url ?? '/', `${encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.append(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, { method, headers, ...(hasBody ? { body: body as BodyInit } : {}) });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const body = new Uint8Array(await response.arrayBuffer());
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  res.setHeader('content-length', String(body.byteLength));
  res.end(body);
}

const jsonError = (status: number, code: string, message: string) =>
  Response.json({ error: { code, message } }, { status });

/**
 * Serves a bot on node:http or Express, reading the raw body itself.
 *
 * @example
 * http.createServer(toNodeHandler(bot)).listen(3000);
 * app.post('/webhook', toNodeHandler(bot));            // Express: no express.json() before it
 */
export function toNodeHandler(bot: FetchHandler, options: NodeHandlerOptions = {}): NodeHandler {
  const { maxBodyBytes = 1024 * 1024 } = options;
  return async (req, res, next) => {
    try {
      let body: Uint8Array | string | undefined;
      try {
        body = await rawBody(req, maxBodyBytes);
      } catch (error) {
        if (!(error instanceof BodyTooLarge)) throw error;
        return await send(res, jsonError(413, 'payload_too_large', `the body is over ${maxBodyBytes} bytes`));
      }
      if (body === undefined)
        return await send(res, jsonError(400, 'body_already_parsed', PARSED_BODY_MESSAGE));
      await send(res, await bot.fetch(toRequest(req, body)));
    } catch (error) {
      if (next) return next(error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  };
}
