// The event streams of the three model APIs the fake model server speaks, as SSE frames: OpenAI
// chat completions, the OpenAI Responses API and Anthropic Messages. Only what the real clients read.

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
  toolCalls: readonly FakeToolCall[];
  /** Ends at the output limit instead of a normal stop. */
  cutShort: boolean;
}

/** A frame and whether it carries reply text (the fake counts those for `cutAfter`). @internal */
export interface Frame {
  data: string;
  text: boolean;
}

const sse = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
const argsOf = (call: FakeToolCall) =>
  typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
const created = () => Math.floor(Date.now() / 1000);

/** `POST /v1/chat/completions` with `stream: true`. @internal */
export function chatFrames(answer: WireAnswer, callId: (call: FakeToolCall) => string): Frame[] {
  const base = {
    id: `chatcmpl-${answer.id}`,
    object: 'chat.completion.chunk',
    created: created(),
    model: answer.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const frames: Frame[] = [{ data: chunk({ role: 'assistant', content: '' }), text: false }];
  for (const text of answer.chunks) frames.push({ data: chunk({ content: text }), text: true });
  answer.toolCalls.forEach((call, index) => {
    const start = { index, id: callId(call), type: 'function', function: { name: call.name, arguments: '' } };
    frames.push({ data: chunk({ tool_calls: [start] }), text: false });
    frames.push({
      data: chunk({ tool_calls: [{ index, function: { arguments: argsOf(call) } }] }),
      text: false,
    });
  });
  const finish = answer.cutShort ? 'length' : answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
  frames.push({ data: chunk({}, finish), text: false });
  frames.push({ data: 'data: [DONE]\n\n', text: false });
  return frames;
}

/** `POST /v1/responses` with `stream: true`. @internal */
export function responsesFrames(answer: WireAnswer, callId: (call: FakeToolCall) => string): Frame[] {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) =>
    sse({ type, sequence_number: sequence++, ...fields }, type);
  const usage = {
    input_tokens: 1,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 1,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 2,
  };
  const incomplete_details = answer.cutShort ? { reason: 'max_output_tokens' } : null;
  const response = (status: string, output: unknown[]) => ({
    id: `resp_${answer.id}`,
    object: 'response',
    created_at: created(),
    status,
    model: answer.model,
    output,
    usage: status === 'in_progress' ? null : usage,
    incomplete_details: status === 'incomplete' ? incomplete_details : null,
    error: null,
  });
  const frames: Frame[] = [
    { data: event('response.created', { response: response('in_progress', []) }), text: false },
    { data: event('response.in_progress', { response: response('in_progress', []) }), text: false },
  ];
  const output: unknown[] = [];
  if (answer.chunks.length > 0) {
    const item_id = `msg_${answer.id}`;
    const output_index = output.length;
    const text = answer.chunks.join('');
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    const item = { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    const at = { item_id, output_index, content_index: 0 };
    frames.push({ data: event('response.output_item.added', { output_index, item }), text: false });
    frames.push({ data: event('response.content_part.added', { ...at, part }), text: false });
    for (const delta of answer.chunks) {
      frames.push({ data: event('response.output_text.delta', { ...at, delta, logprobs: [] }), text: true });
    }
    frames.push({ data: event('response.output_text.done', { ...at, text, logprobs: [] }), text: false });
    const done = { ...part, text };
    frames.push({ data: event('response.content_part.done', { ...at, part: done }), text: false });
    const finished = { ...item, status: answer.cutShort ? 'incomplete' : 'completed', content: [done] };
    output.push(finished);
    frames.push({ data: event('response.output_item.done', { output_index, item: finished }), text: false });
  }
  for (const call of answer.toolCalls) {
    const output_index = output.length;
    const item = {
      id: `fc_${answer.id}_${output_index}`,
      type: 'function_call',
      status: 'in_progress',
      call_id: callId(call),
      name: call.name,
      arguments: '',
    };
    const args = argsOf(call);
    frames.push({ data: event('response.output_item.added', { output_index, item }), text: false });
    const at = { item_id: item.id, output_index };
    frames.push({
      data: event('response.function_call_arguments.delta', { ...at, delta: args }),
      text: false,
    });
    frames.push({
      data: event('response.function_call_arguments.done', { ...at, arguments: args }),
      text: false,
    });
    const finished = { ...item, status: 'completed', arguments: args };
    output.push(finished);
    frames.push({ data: event('response.output_item.done', { output_index, item: finished }), text: false });
  }
  const status = answer.cutShort ? 'incomplete' : 'completed';
  frames.push({
    data: event(`response.${status}`, { response: response(status, output) }),
    text: false,
  });
  return frames;
}

/** `POST /v1/messages` with `stream: true`. @internal */
export function anthropicFrames(answer: WireAnswer, callId: (call: FakeToolCall) => string): Frame[] {
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
  const frames: Frame[] = [{ data: event('message_start', { message }), text: false }];
  let index = 0;
  if (answer.chunks.length > 0) {
    frames.push({
      data: event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
      text: false,
    });
    for (const text of answer.chunks) {
      frames.push({
        data: event('content_block_delta', { index, delta: { type: 'text_delta', text } }),
        text: true,
      });
    }
    frames.push({ data: event('content_block_stop', { index }), text: false });
    index += 1;
  }
  for (const call of answer.toolCalls) {
    const block = { type: 'tool_use', id: callId(call), name: call.name, input: {} };
    frames.push({ data: event('content_block_start', { index, content_block: block }), text: false });
    const delta = { type: 'input_json_delta', partial_json: argsOf(call) };
    frames.push({ data: event('content_block_delta', { index, delta }), text: false });
    frames.push({ data: event('content_block_stop', { index }), text: false });
    index += 1;
  }
  const stop_reason = answer.cutShort ? 'max_tokens' : answer.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
  frames.push({
    data: event('message_delta', {
      delta: { stop_reason, stop_sequence: null },
      usage: { output_tokens: 1 },
    }),
    text: false,
  });
  frames.push({ data: event('message_stop', {}), text: false });
  return frames;
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
