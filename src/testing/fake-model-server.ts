// A model on a loopback port for tests and examples: OpenAI-compatible (chat completions and the
// Responses API) and Anthropic-compatible (Messages), streaming scripted answers to the real
// `openai`, `ai` + `@ai-sdk/openai` and `@anthropic-ai/sdk` clients. It can call tools, cut its
// connection after N text chunks, or fail before its first token. Each API frames an answer the same
// way: its opening frames, one frame per text chunk, then the frames that close the text, the tool
// calls and the end of the answer (the wires, below the server).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text as readText } from 'node:stream/consumers';

/** A tool call a fake model makes. */
export interface FakeToolCall {
  /** The tool's name. */
  name: string;
  /** Its arguments: an object (sent as JSON) or the raw argument text. */
  arguments?: Record<string, unknown> | string;
  /** The call id; generated when absent. */
  id?: string;
}

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

/** Each API by its path, with its frames for an answer. */
const ROUTES: Record<string, [FakeModelApi, (answer: WireAnswer) => WireFrames]> = {
  '/v1/chat/completions': ['chat', chatFrames],
  '/v1/responses': ['responses', responsesFrames],
  '/v1/messages': ['anthropic', anthropicFrames],
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
  const requests: FakeModelRequest[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    void answer(req, res).catch(() => res.destroy());
  });

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const route = ROUTES[path];
    // Read whole before any answer, so the client is never cut off mid-send.
    const body = await readText(req)
      .then((raw) => JSON.parse(raw) as Record<string, unknown> | null)
      .catch(() => null);
    if (req.method !== 'POST' || route === undefined)
      return json(res, 404, { error: { message: `no route ${path}` } });
    const [api, frames] = route;
    if (body === null) return json(res, 400, errorBody(api, 400, 'the body is not JSON'));
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
    const { head, text, tail } = frames(answer);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = (frame: string) => new Promise<void>((resolve) => res.write(frame, () => resolve()));
    for (const frame of head) await write(frame);
    for (const [sent, frame] of text.entries()) {
      // Gone mid-answer, as a model whose connection drops: no terminating chunk, no [DONE].
      if (sent === turn.cutAfter) return void res.socket?.destroy();
      if (sent === turn.closeAfter) return void res.end();
      if (sent === turn.holdAfter) await new Promise<void>((resolve) => held.add(resolve));
      await write(frame);
    }
    for (const frame of tail) await write(frame);
    res.end();
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

function chunksOf(turn: FakeModelTurn): string[] {
  if (turn.chunks) return [...turn.chunks];
  const text = turn.text ?? '';
  // Words, or pieces of `chunkSize` UTF-16 code units (without the u flag, a class matches one unit).
  const size = Math.max(1, Math.floor(turn.chunkSize ?? 0));
  const piece = turn.chunkSize === undefined ? /\S+\s*|\s+/g : new RegExp(`[\\s\\S]{1,${size}}`, 'g');
  return text.match(piece) ?? [];
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

// The wires: each API's stream of SSE frames for an answer, and its error body. Only what the real
// clients read.

/** One scripted answer, as the wire builders need it. */
interface WireAnswer {
  /** Unique per answer, as the real APIs' ids are. */
  id: string;
  model: string;
  chunks: readonly string[];
  toolCalls: readonly (FakeToolCall & { id: string })[];
  /** Ends at the output limit instead of a normal stop. */
  cutShort: boolean;
}

/**
 * An answer's frames: those before the text, one per text chunk (the server counts these for
 * `cutAfter`, `closeAfter` and `holdAfter`), and those after it.
 */
interface WireFrames {
  head: string[];
  text: string[];
  tail: string[];
}

const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
const argsOf = (call: FakeToolCall) =>
  typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
const created = () => Math.floor(Date.now() / 1000);
/** How the answer ends, in the API's words: at the output limit, for tool calls, or done. */
const ending = (answer: WireAnswer, [limit, tools, done]: readonly [string, string, string]) =>
  answer.cutShort ? limit : answer.toolCalls.length > 0 ? tools : done;

/** `POST /v1/chat/completions` with `stream: true`. */
function chatFrames(answer: WireAnswer): WireFrames {
  const base = {
    id: `chatcmpl-${answer.id}`,
    object: 'chat.completion.chunk',
    created: created(),
    model: answer.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const tools = answer.toolCalls.flatMap((call, index) => [
    chunk({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    }),
    chunk({ tool_calls: [{ index, function: { arguments: argsOf(call) } }] }),
  ]);
  return {
    head: [chunk({ role: 'assistant', content: '' })],
    text: answer.chunks.map((content) => chunk({ content })),
    tail: [...tools, chunk({}, ending(answer, ['length', 'tool_calls', 'stop'])), 'data: [DONE]\n\n'],
  };
}

/** `POST /v1/responses` with `stream: true`. */
function responsesFrames(answer: WireAnswer): WireFrames {
  // Frames are made in the order they are sent: each takes the next sequence number.
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) =>
    sse({ type, sequence_number: sequence++, ...fields }, type);
  const status = ending(answer, ['incomplete', 'completed', 'completed']);
  const response = (status: string, output: unknown[]) => ({
    id: `resp_${answer.id}`,
    object: 'response',
    created_at: created(),
    status,
    model: answer.model,
    output,
    usage:
      status === 'in_progress'
        ? null
        : {
            input_tokens: 1,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 1,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 2,
          },
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    error: null,
  });
  const head = [
    event('response.created', { response: response('in_progress', []) }),
    event('response.in_progress', { response: response('in_progress', []) }),
  ];
  const output: unknown[] = [];
  const text: string[] = [];
  const tail: string[] = [];
  if (answer.chunks.length > 0) {
    const at = { item_id: `msg_${answer.id}`, output_index: 0, content_index: 0 };
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    const item = { id: at.item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    head.push(event('response.output_item.added', { output_index: 0, item }));
    head.push(event('response.content_part.added', { ...at, part }));
    for (const delta of answer.chunks)
      text.push(event('response.output_text.delta', { ...at, delta, logprobs: [] }));
    const done = { ...part, text: answer.chunks.join('') };
    const finished = { ...item, status, content: [done] };
    output.push(finished);
    tail.push(
      event('response.output_text.done', { ...at, text: done.text, logprobs: [] }),
      event('response.content_part.done', { ...at, part: done }),
      event('response.output_item.done', { output_index: 0, item: finished }),
    );
  }
  for (const call of answer.toolCalls) {
    const output_index = output.length;
    const item_id = `fc_${answer.id}_${output_index}`;
    const { id: call_id, name } = call;
    const item = { id: item_id, type: 'function_call', status: 'in_progress', call_id, name, arguments: '' };
    const args = argsOf(call);
    const finished = { ...item, status: 'completed', arguments: args };
    output.push(finished);
    tail.push(
      event('response.output_item.added', { output_index, item }),
      event('response.function_call_arguments.delta', { item_id, output_index, delta: args }),
      event('response.function_call_arguments.done', { item_id, output_index, arguments: args }),
      event('response.output_item.done', { output_index, item: finished }),
    );
  }
  tail.push(event(`response.${status}`, { response: response(status, output) }));
  return { head, text, tail };
}

/** `POST /v1/messages` with `stream: true`. */
function anthropicFrames(answer: WireAnswer): WireFrames {
  const event = (type: string, fields: Record<string, unknown>) => sse({ type, ...fields }, type);
  const message = {
    id: `msg_${answer.id}`,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
  const head = [event('message_start', { message })];
  const text = answer.chunks.map((text) =>
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
  );
  const tail: string[] = [];
  // The text is block 0 when there is any; the tool calls are the blocks after it.
  const textBlocks = answer.chunks.length > 0 ? 1 : 0;
  if (textBlocks) {
    head.push(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    tail.push(event('content_block_stop', { index: 0 }));
  }
  answer.toolCalls.forEach((call, i) => {
    const index = textBlocks + i;
    const block = { type: 'tool_use', id: call.id, name: call.name, input: {} };
    const delta = { type: 'input_json_delta', partial_json: argsOf(call) };
    tail.push(
      event('content_block_start', { index, content_block: block }),
      event('content_block_delta', { index, delta }),
      event('content_block_stop', { index }),
    );
  });
  const stop_reason = ending(answer, ['max_tokens', 'tool_use', 'end_turn']);
  tail.push(
    event('message_delta', { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 1 } }),
    event('message_stop', {}),
  );
  return { head, text, tail };
}

/** The error body each API answers a failed request with. */
function errorBody(api: FakeModelApi, status: number, message: string) {
  if (api === 'anthropic') {
    const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : 'api_error';
    return { type: 'error', error: { type, message } };
  }
  const code = status === 401 ? 'invalid_api_key' : null;
  return {
    error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code },
  };
}
