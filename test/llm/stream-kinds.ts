// Canned events of each kind of model stream, as the real clients yield them, for tests that need
// no server: text chunks, and a tool call whose argument text must never reach the reply.

export type Kind = 'text' | 'openai-chat' | 'openai-responses' | 'ai-sdk' | 'anthropic';
export const KINDS: Kind[] = ['text', 'openai-chat', 'openai-responses', 'ai-sdk', 'anthropic'];

/** Text that breaks naive splitting: a ZWJ family, flags, CJK, combining marks. */
export const HARD_TEXT = 'Hi 👩‍👩‍👧‍👦 🇳🇴🇯🇵 日本語のテキスト cafe\u0301 n\u0303o ✓';

/** The tool arguments a test looks for in the text (it must never be there). */
export const TOOL_ARGS = '{"city":"Zanzibar-ARGS"}';

/** The events of one answer of `kind`: its text in these chunks, then a tool call when asked. */
export function eventsOf(kind: Kind, chunks: readonly string[], tool = false): unknown[] {
  switch (kind) {
    case 'text':
      return [...chunks];
    case 'openai-chat': {
      const chunk = (delta: object, finish_reason: string | null = null) => ({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta, finish_reason }],
      });
      return [
        chunk({ role: 'assistant', content: '' }),
        ...chunks.map((content) => chunk({ content })),
        ...(tool
          ? [
              chunk({
                tool_calls: [
                  { index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } },
                ],
              }),
              chunk({ tool_calls: [{ index: 0, function: { arguments: TOOL_ARGS } }] }),
            ]
          : []),
        chunk({}, tool ? 'tool_calls' : 'stop'),
      ];
    }
    case 'openai-responses':
      return [
        { type: 'response.created', sequence_number: 0, response: { id: 'r' } },
        { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg' } },
        ...chunks.map((delta) => ({
          type: 'response.output_text.delta',
          item_id: 'msg',
          output_index: 0,
          delta,
        })),
        ...(tool
          ? [
              {
                type: 'response.output_item.added',
                output_index: 1,
                item: { type: 'function_call', id: 'fc', call_id: 'call_1', name: 'weather', arguments: '' },
              },
              {
                type: 'response.function_call_arguments.delta',
                item_id: 'fc',
                output_index: 1,
                delta: TOOL_ARGS,
              },
              {
                type: 'response.function_call_arguments.done',
                item_id: 'fc',
                output_index: 1,
                arguments: TOOL_ARGS,
              },
            ]
          : []),
        { type: 'response.completed', response: { id: 'r' } },
      ];
    case 'ai-sdk':
      return [
        { type: 'start' },
        { type: 'start-step', request: {}, warnings: [] },
        { type: 'text-start', id: 't' },
        ...chunks.map((text) => ({ type: 'text-delta', id: 't', text })),
        { type: 'text-end', id: 't' },
        ...(tool
          ? [
              { type: 'tool-input-start', id: 'call_1', toolName: 'weather' },
              { type: 'tool-input-delta', id: 'call_1', delta: TOOL_ARGS },
              { type: 'tool-input-end', id: 'call_1' },
              { type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: JSON.parse(TOOL_ARGS) },
              {
                type: 'tool-result',
                toolCallId: 'call_1',
                toolName: 'weather',
                input: {},
                output: TOOL_ARGS,
              },
            ]
          : []),
        { type: 'finish-step', finishReason: tool ? 'tool-calls' : 'stop' },
        { type: 'finish', finishReason: 'stop' },
      ];
    case 'anthropic':
      return [
        { type: 'message_start', message: { id: 'msg', content: [] } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        ...chunks.map((text) => ({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text },
        })),
        { type: 'content_block_stop', index: 0 },
        ...(tool
          ? [
              {
                type: 'content_block_start',
                index: 1,
                content_block: { type: 'tool_use', id: 'call_1', name: 'weather', input: {} },
              },
              {
                type: 'content_block_delta',
                index: 1,
                delta: { type: 'input_json_delta', partial_json: TOOL_ARGS },
              },
              { type: 'content_block_stop', index: 1 },
            ]
          : []),
        { type: 'message_delta', delta: { stop_reason: tool ? 'tool_use' : 'end_turn' } },
        { type: 'message_stop' },
      ];
  }
}

/** The events as an async generator, as a model client hands them out. */
export async function* asyncOf<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** Reads a text stream whole. */
export async function readAll(stream: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of stream) text += piece;
  return text;
}
