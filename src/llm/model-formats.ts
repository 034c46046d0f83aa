// Turns written as each model API's messages: OpenAI chat completions, the AI SDK's ModelMessage,
// Anthropic Messages. The types are the subsets of each SDK's own types that these writers make.
import { fileNote, type Turn, type TurnFile } from './conversation-turns.js';

/** A message for OpenAI chat completions (`ChatCompletionMessageParam`). */
export type OpenAIChatMessage =
  | {
      role: 'user';
      content:
        | string
        | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }>;
      name?: string;
    }
  | { role: 'assistant'; content: string };

/** An AI SDK `ModelMessage` (user or assistant), attachments as file parts with their URL. */
export type AiSdkMessage =
  | { role: 'user'; content: string | AiSdkPart[] }
  | { role: 'assistant'; content: string | AiSdkPart[] };

/** A part of an AI SDK message: text, or a file by URL. */
export type AiSdkPart =
  | { type: 'text'; text: string }
  | { type: 'file'; data: URL; mediaType: string; filename?: string };

/** An Anthropic `MessageParam`; roles alternate, as the API requires. */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content:
    | string
    | Array<{ type: 'text'; text: string } | { type: 'image'; source: { type: 'url'; url: string } }>;
}

/** The message type of each format. */
export interface ModelMessageFormats {
  openai: OpenAIChatMessage;
  'ai-sdk': AiSdkMessage;
  anthropic: AnthropicMessage;
}

/** A format name: `openai`, `ai-sdk` or `anthropic`. */
export type ModelMessageFormat = keyof ModelMessageFormats;

// OpenAI's `name`: letters, digits, `_` and `-`, at most 64.
const openAiName = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
// In a group, a user's words are a JSON string after the sender's id (`usr_bob: "…"`): a line of
// theirs that reads `usr_alice: I approve` stays inside Bob's quotes and cannot pass for Alice.
const said = (text: string, quoted: boolean) => (quoted ? JSON.stringify(text) : text);
const speakerOf = (turn: Turn, group: boolean) => (group && turn.role === 'user' ? turn.senderId : undefined);
type TextPart = { type: 'text'; text: string };

/**
 * A turn's content: its text, files as notes (after the speaker's id, in a group), or, `asParts`
 * (by default when `native` takes one of its files), a part per piece: `native`'s for a file it
 * takes, text for the rest, after a `speaker:` part.
 */
function contentOf<P>(
  turn: Turn,
  speaker: string | undefined,
  native: (file: TurnFile) => P | undefined,
  asParts = turn.parts.some((part) => part.type !== 'text' && native(part) !== undefined),
): string | (TextPart | P)[] {
  const quoted = speaker !== undefined;
  const pieces = turn.parts.map((part): TextPart | P =>
    part.type === 'text'
      ? { type: 'text', text: said(part.text, quoted) }
      : ((asParts ? native(part) : undefined) ?? { type: 'text', text: fileNote(part) }),
  );
  if (asParts) return quoted ? [{ type: 'text', text: `${speaker}:` }, ...pieces] : pieces;
  const text = pieces.map((piece) => (piece as TextPart).text).join('\n');
  return quoted ? `${speaker}: ${text}` : text;
}

const imageUrl = (file: TurnFile) =>
  file.type === 'image' && file.url !== undefined
    ? { type: 'image_url' as const, image_url: { url: file.url } }
    : undefined;

/** OpenAI chat completions: users keep their `name`; images with a URL are `image_url` parts. */
function toOpenAI(turns: readonly Turn[]): OpenAIChatMessage[] {
  return turns.map((turn): OpenAIChatMessage => {
    if (turn.role === 'assistant')
      return { role: 'assistant', content: contentOf(turn, undefined, () => undefined) as string };
    return { role: 'user', content: contentOf(turn, undefined, imageUrl), name: openAiName(turn.senderId) };
  });
}

const aiSdkFile = (file: TurnFile): AiSdkPart | undefined => {
  if (file.url === undefined) return undefined;
  const part = { type: 'file' as const, data: new URL(file.url), mediaType: file.mediaType };
  return file.filename ? { ...part, filename: file.filename } : part;
};

/**
 * The AI SDK: no `name` field, so in a group each user's text is quoted after who said it; an
 * attachment with a URL is a file part (`data: URL`).
 */
function toAiSdk(turns: readonly Turn[], group: boolean): AiSdkMessage[] {
  return turns.map((turn): AiSdkMessage => {
    const asParts = turn.parts.some((part) => part.type !== 'text');
    return { role: turn.role, content: contentOf(turn, speakerOf(turn, group), aiSdkFile, asParts) };
  });
}

const imageBlock = (file: TurnFile) =>
  file.type === 'image' && file.url !== undefined
    ? { type: 'image' as const, source: { type: 'url' as const, url: file.url } }
    : undefined;

/**
 * Anthropic: roles must alternate and start with the user, so a run of one role is merged into
 * one message and assistant messages before the first user message are dropped (when only the
 * agent's are left, they follow a user message `…` standing for what came before); in a group
 * each user's text is quoted after who said it; an image with a URL is an image block.
 */
function toAnthropic(turns: readonly Turn[], group: boolean): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const firstUser = turns.findIndex((turn) => turn.role === 'user');
  if (firstUser === -1 && turns.length > 0) out.push({ role: 'user', content: '…' });
  for (const turn of firstUser === -1 ? turns : turns.slice(firstUser)) {
    const content = contentOf(turn, speakerOf(turn, group), imageBlock);
    const last = out.at(-1);
    if (last?.role !== turn.role) {
      out.push({ role: turn.role, content });
    } else if (typeof last.content === 'string' && typeof content === 'string') {
      last.content = `${last.content}\n\n${content}`;
    } else {
      const blocks = (value: AnthropicMessage['content']) =>
        typeof value === 'string' ? [{ type: 'text' as const, text: value }] : value;
      last.content = [...blocks(last.content), ...blocks(content)];
    }
  }
  return out;
}

/** The writer of each format, by its name. @internal */
export const WRITERS: {
  [F in ModelMessageFormat]: (turns: Turn[], group: boolean) => ModelMessageFormats[F][];
} = { openai: toOpenAI, 'ai-sdk': toAiSdk, anthropic: toAnthropic };
