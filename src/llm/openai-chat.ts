// OpenAI chat-completions streams (`ChatCompletionChunk`s, from `openai.chat.completions.create({
// stream: true })` or any compatible server): `choices[0].delta.content` is the text.
import { endedEarly, failureDetail, ModelStreamError } from './model-stream-error.js';
import { type Decoder, type ModelStopReason, type Piece, record, STEP, str } from './stream-pieces.js';

// The finish reasons that end the text before the model was done.
const CUT_SHORT: Record<string, ModelStopReason> = { length: 'length', content_filter: 'content_filter' };

/** True for a chat-completions chunk. @internal */
export function isChatChunk(event: Record<string, unknown>): boolean {
  return event.object === 'chat.completion.chunk' || (Array.isArray(event.choices) && !('type' in event));
}

/**
 * A decoder of chat-completions chunks. Tool-call deltas carry the call's name once, in the
 * delta of its `index`, then only argument fragments: the name announces the call, the
 * fragments are dropped. A tool runner (`runTools`) streams several completions one after the
 * other: a new chunk `id` starts a new one, whose text after a tool call starts after a blank line.
 * A completion ends with a `finish_reason`: a stream whose last completion has none was cut.
 * @internal
 */
export function chatDecoder(): Decoder {
  const announced = new Set<number>();
  let completion: unknown;
  let finished = false;
  const read = (event: unknown, out: Piece[]) => {
    const chunk = record(event) ?? {};
    if (chunk.id !== completion) {
      completion = chunk.id;
      announced.clear();
      finished = false;
    }
    // A compatible server may put its error in a chunk; the openai package throws it itself.
    if (chunk.error !== undefined && chunk.error !== null) {
      throw new ModelStreamError('openai-chat', failureDetail(chunk.error), chunk.error);
    }
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    // Only the first choice is the reply: `n > 1` asks for alternatives, not parts of one answer.
    const choice = record(choices[0]);
    if (typeof choice?.finish_reason === 'string') finished = true;
    const cut = CUT_SHORT[String(choice?.finish_reason)];
    if (cut) out.push({ cutShort: cut });
    const delta = record(choice?.delta);
    if (!delta) return;
    const toolCalls = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
    for (const call of toolCalls) {
      const fields = record(call) ?? {};
      const index = typeof fields.index === 'number' ? fields.index : announced.size;
      const name = str(record(fields.function)?.name);
      if (name === undefined || announced.has(index)) continue;
      announced.add(index);
      const id = str(fields.id);
      out.push(STEP, { name, ...(id === undefined ? {} : { id }), source: 'openai-chat' });
    }
    const content = str(delta.content) ?? str(delta.refusal);
    if (content) out.push(content);
  };
  const end = () => {
    if (!finished) throw endedEarly('openai-chat', 'a finish_reason');
  };
  return { read, end };
}
