// A model on a loopback port for tests and examples: OpenAI-compatible (chat completions and the
// Responses API) and Anthropic-compatible (Messages), streaming scripted answers to the real
// `openai`, `ai` + `@ai-sdk/openai` and `@anthropic-ai/sdk` clients. It can call tools, cut its
// connection after N text chunks, or fail before its first token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text as readText } from 'node:stream/consumers';
import {
  anthropicFrames,
  chatFrames,
  errorBody,
  type FakeToolCall,
  responsesFrames,
  type WireAnswer,
  type WireFrames,
} from './fake-model-wire.js';

export type { FakeToolCall } from './fake-model-wire.js';

/** Which API a request came to. */
export type FakeModelApi = 'chat' | 'responses' | 'anthropic';

/** One answer of the fake model. */
export interface FakeModelTurn {
  /** The answer's text, sent in word-sized chunks (or `chunkSize` code units). */
  text?: string;
  /** The answer's text as these exact chunks (instead of `text`). */
  chunks?: readonly string[];
  /** Chunk `text` into pieces of this many UTF-16 code units (1 splits every surrogate pair). */
  chunkSize?: number;
  /** Tool calls after the text; the client runs them and asks again. */
  toolCalls?: readonly FakeToolCall[];
  /** Breaks the connection once this many text chunks are sent (a model failing halfway). */
  cutAfter?: number;
  /**
   * Ends the response cleanly once this many text chunks are sent, without the event that closes
   * an answer (a proxy that closes the stream early): the client's iterator just ends.
   */
  closeAfter?: number;
  /**
   * Holds the answer once this many text chunks are sent, until `model.release()`: a model in the
   * middle of its answer, for as long as the test needs.
   */
  holdAfter?: number;
  /**
   * How the answer ends when it ends well: `'done'` (default), or `'length'`, the model stopping at its
   * output limit (chat `finish_reason: 'length'`, Responses `response.incomplete` for
   * `max_output_tokens`, Anthropic `stop_reason: 'max_tokens'`).
   */
  stop?: 'done' | 'length';
  /** Fails before the first token: this HTTP status (401: a bad key) with the API's error body. */
  fail?: number;
}

/** A request the fake model received (no headers are kept: they hold the API key). */
export interface FakeModelRequest {
  api: FakeModelApi;
  /** The parsed JSON body: `messages`, `input`, `tools`, `model`... */
  body: Record<string, unknown>;
}

/** How the fake model answers: a fixed turn, or one computed from the request. */
export type FakeModelReply = FakeModelTurn | ((request: FakeModelRequest) => FakeModelTurn);

/**
 * Options of {@link createFakeModelServer}. The fields of a turn (`text`, `toolCalls`, `cutAfter`,
 * `fail`...) given here are its answer to every request nothing was queued for, as `reply` is.
 */
export interface FakeModelServerOptions extends FakeModelTurn {
  /** The port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** The answer when none is queued; by default `You said: <the last user text>`. */
  reply?: FakeModelReply;
}

/** A running fake model. */
export interface FakeModelServer {
  /** `http://127.0.0.1:<port>`: Anthropic's `baseURL`. */
  url: string;
  /** `${url}/v1`: the `baseURL` of `openai` and `@ai-sdk/openai`. */
  openaiBaseUrl: string;
  /** Queues answers, one per request, before `reply` is used again. */
  push(...turns: FakeModelReply[]): void;
  /** Every request so far, oldest first. */
  readonly requests: readonly FakeModelRequest[];
  /** Lets every answer held now by `holdAfter` go on (one held later waits for the next call). */
  release(): void;
  /** Stops listening and breaks open streams. */
  close(): Promise<void>;
}

const ROUTES: Record<string, FakeModelApi> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/v1/messages': 'anthropic',
};

const WIRES: Record<FakeModelApi, (answer: WireAnswer) => WireFrames> = {
  chat: chatFrames,
  responses: responsesFrames,
  anthropic: anthropicFrames,
};

/**
 * Starts a fake model on 127.0.0.1. Point a real client at it (`new OpenAI({ baseURL:
 * model.openaiBaseUrl, apiKey: 'test' })`, `createOpenAI({ baseURL: model.openaiBaseUrl })`,
 * `new Anthropic({ baseURL: model.url, apiKey: 'test' })`) and script its answers.
 *
 * @example
 * const model = await createFakeModelServer();
 * model.push({ toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] }, { text: 'Sunny, 21 °C.' });
 * model.push({ text: 'Hello', cutAfter: 1 }, { fail: 401 });
 * const broken = await createFakeModelServer({ fail: 401 }); // every request
 */
export async function createFakeModelServer(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  const { createServer } = await import('node:http');
  const { port, reply, ...turn } = options;
  const fallback: FakeModelReply = reply ?? (Object.keys(turn).length > 0 ? turn : echo);
  const queue: FakeModelReply[] = [];
  const held = new Set<() => void>();
  const hold = () => new Promise<void>((resolve) => held.add(resolve));
  const requests: FakeModelRequest[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    void answer(req, res).catch(() => res.destroy());
  });

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const api = ROUTES[path];
    const raw = await readText(req);
    if (req.method !== 'POST' || api === undefined)
      return json(res, 404, { error: { message: `no route ${path}` } });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(res, 400, errorBody(api, 400, 'the body is not JSON'));
    }
    const request = { api, body };
    requests.push(request);
    const next = queue.shift() ?? fallback;
    const turn = typeof next === 'function' ? next(request) : next;
    if (turn.fail !== undefined) {
      return json(res, turn.fail, errorBody(api, turn.fail, 'Incorrect API key provided'));
    }
    if (body.stream !== true) return json(res, 400, errorBody(api, 400, 'the fake model only streams'));
    const toolCalls = (turn.toolCalls ?? []).map((call) => ({ ...call, id: call.id ?? `call_${++calls}` }));
    const answer = {
      id: `fake_${requests.length}`,
      model: String(body.model ?? 'fake'),
      chunks: chunksOf(turn),
      toolCalls,
      cutShort: turn.stop === 'length',
    };
    await stream(res, WIRES[api](answer), turn, hold);
  }

  server.listen(port ?? 0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    push: (...turns) => void queue.push(...turns),
    release: () => {
      for (const resolve of held) resolve();
      held.clear();
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function stream(
  res: ServerResponse,
  { head, text, tail }: WireFrames,
  turn: FakeModelTurn,
  hold: () => Promise<void>,
) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const write = (frame: string) => new Promise<void>((resolve) => res.write(frame, () => resolve()));
  for (const frame of head) await write(frame);
  for (const [sent, frame] of text.entries()) {
    // Gone mid-answer, as a model whose connection drops: no terminating chunk, no [DONE].
    if (sent === turn.cutAfter) return void res.socket?.destroy();
    if (sent === turn.closeAfter) return void res.end();
    if (sent === turn.holdAfter) await hold();
    await write(frame);
  }
  for (const frame of tail) await write(frame);
  res.end();
}

function chunksOf(turn: FakeModelTurn): string[] {
  if (turn.chunks) return [...turn.chunks];
  const text = turn.text ?? '';
  if (turn.chunkSize !== undefined) {
    const size = Math.max(1, Math.floor(turn.chunkSize));
    return Array.from({ length: Math.ceil(text.length / size) }, (_, i) =>
      text.slice(i * size, (i + 1) * size),
    );
  }
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** The default answer: the last user text, said back. */
function echo(request: FakeModelRequest): FakeModelTurn {
  return { text: `You said: ${lastUserText(request.body)}` };
}

function lastUserText(body: Record<string, unknown>): string {
  if (typeof body.input === 'string') return body.input;
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : [];
  const { content } = (list.findLast((m) => m?.role === 'user') ?? {}) as { content?: unknown };
  if (typeof content === 'string') return content;
  const texts = Array.isArray(content) ? content.map((part) => part?.text) : [];
  return texts.filter((text) => typeof text === 'string').join('');
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
