// Scaffolding for the LLM examples with no API key: a fake model on a loopback port (the test kit's
// createFakeModelServer) that answers like a small assistant with one tool. It asks for
// `get_weather` when the user asks about the weather in a city, puts the tool's answer into words,
// and otherwise says how much of the conversation it was given (so memory shows). Not for copying.

import { createFakeModelServer, type FakeModelRequest, type FakeModelServer } from 'agent-messaging/testing';

type Json = Record<string, unknown>;
const asList = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** The text of a message's content, whatever the API's shape. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asList(content)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** The tool's result, when the last thing the client sent is one (chat, Responses, Anthropic). */
function toolResult(request: FakeModelRequest): string | undefined {
  const last = asList(request.body.messages ?? request.body.input).at(-1) ?? {};
  if (last.role === 'tool') return textOf(last.content);
  if (last.type === 'function_call_output') return String(last.output);
  const block = asList(last.content).find((part) => part.type === 'tool_result');
  return block === undefined ? undefined : textOf(block.content);
}

function answer(request: FakeModelRequest) {
  const result = toolResult(request);
  if (result !== undefined) return { text: `I checked: ${result}.` };
  const turns = asList(request.body.messages ?? request.body.input).filter((m) => m.role !== 'system');
  const said = textOf(turns.at(-1)?.content);
  const city = /weather in ([\p{L} ]+)/iu.exec(said)?.[1]?.trim();
  if (city) return { toolCalls: [{ name: 'get_weather', arguments: { city } }] };
  return { text: `You said "${said}". I can see ${turns.length - 1} earlier messages of our chat.` };
}

/** Starts the fake model; it stops when the process ends. */
export async function startFakeModel(): Promise<FakeModelServer> {
  const model = await createFakeModelServer({ reply: answer });
  process.once('beforeExit', () => void model.close());
  return model;
}
