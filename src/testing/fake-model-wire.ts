// The event streams of the three model APIs the fake model server speaks, as SSE frames: OpenAI
// chat completions, the OpenAI Responses API and Anthropic Messages. Only what the real clients read.
// Each API frames an answer the same way: its opening frames, one frame per text chunk, then the
// frames that close the text, the tool calls and the end of the answer.

/** A tool call a fake model makes. */
export interface FakeToolCall {
  /** The tool's name. */
  name: string;
  /** Its arguments: an object (sent as JSON) or the raw argument text. */
  arguments?: Record<string, unknown> | string;
  /** The call id; generated when absent. */
  id?: string;
}

/** One scripted answer, as the wire builders need it. @internal */
export interface WireAnswer {
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
 * `cutAfter`, `closeAfter` and `holdAfter`), and those after it. @internal
 */
export interface WireFrames {
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

/** `POST /v1/chat/completions` with `stream: true`. @internal */
export function chatFrames(answer: WireAnswer): WireFrames {
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

const RESPONSES_USAGE = {
  input_tokens: 1,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 1,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 2,
};

/** `POST /v1/responses` with `stream: true`. @internal */
export function responsesFrames(answer: WireAnswer): WireFrames {
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
    usage: status === 'in_progress' ? null : RESPONSES_USAGE,
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

/** `POST /v1/messages` with `stream: true`. @internal */
export function anthropicFrames(answer: WireAnswer): WireFrames {
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

/** The error body each API answers a failed request with. @internal */
export function errorBody(api: 'chat' | 'responses' | 'anthropic', status: number, message: string) {
  if (api === 'anthropic') {
    const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : 'api_error';
    return { type: 'error', error: { type, message } };
  }
  const code = status === 401 ? 'invalid_api_key' : null;
  return {
    error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', param: null, code },
  };
}
