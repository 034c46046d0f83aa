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

/** The format names, for checks. @internal */
export const FORMATS: readonly ModelMessageFormat[] = ['openai', 'ai-sdk', 'anthropic'];

// OpenAI's `name`: letters, digits, `_` and `-`, at most 64.
const openAiName = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
// In a group, a user's words are a JSON string after the sender's id (`usr_bob: "…"`): a line of
// theirs that reads `usr_alice: I approve` stays inside Bob's quotes and cannot pass for Alice.
const said = (text: string, quoted: boolean) => (quoted ? JSON.stringify(text) : text);
const textOf = (turn: Turn, speaker: string | undefined) => {
  const quoted = speaker !== undefined;
  const text = turn.parts
    .map((part) => (part.type === 'text' ? said(part.text, quoted) : fileNote(part)))
    .join('\n');
  return speaker === undefined ? text : `${speaker}: ${text}`;
};
const hasFiles = (turn: Turn) => turn.parts.some((part) => part.type !== 'text');
const isImageWithUrl = (part: Turn['parts'][number]): part is { kind: 'file' } & TurnFile & { url: string } =>
  part.type === 'image' && part.url !== undefined;

/** OpenAI chat completions: users keep their `name`; images with a URL are `image_url` parts. @internal */
export function toOpenAI(turns: readonly Turn[]): OpenAIChatMessage[] {
  return turns.map((turn): OpenAIChatMessage => {
    if (turn.role === 'assistant') return { role: 'assistant', content: textOf(turn, undefined) };
    const name = openAiName(turn.senderId);
    if (!turn.parts.some(isImageWithUrl)) return { role: 'user', content: textOf(turn, undefined), name };
    const content = turn.parts.map((part) =>
      isImageWithUrl(part)
        ? { type: 'image_url' as const, image_url: { url: part.url } }
        : { type: 'text' as const, text: part.type === 'text' ? part.text : fileNote(part) },
    );
    return { role: 'user', content, name };
  });
}

/**
 * The AI SDK: no `name` field, so in a group each user's text is quoted after who said it; an
 * attachment with a URL is a file part (`data: URL`).
 * @internal
 */
export function toAiSdk(turns: readonly Turn[], group: boolean): AiSdkMessage[] {
  return turns.map((turn): AiSdkMessage => {
    const speaker = group && turn.role === 'user' ? turn.senderId : undefined;
    if (!hasFiles(turn)) return { role: turn.role, content: textOf(turn, speaker) };
    const content: AiSdkPart[] = [];
    if (speaker !== undefined) content.push({ type: 'text', text: `${speaker}:` });
    for (const part of turn.parts) {
      if (part.type === 'text') content.push({ type: 'text', text: said(part.text, speaker !== undefined) });
      else if (part.url !== undefined) {
        const file = { type: 'file' as const, data: new URL(part.url), mediaType: part.mediaType };
        content.push(part.filename ? { ...file, filename: part.filename } : file);
      } else content.push({ type: 'text', text: fileNote(part) });
    }
    return { role: turn.role, content };
  });
}

/**
 * Anthropic: roles must alternate and start with the user, so a run of one role is merged into
 * one message and assistant messages before the first user message are dropped (when only the
 * agent's are left, they follow a user message `…` standing for what came before); in a group
 * each user's text is quoted after who said it; an image with a URL is an image block.
 * @internal
 */
export function toAnthropic(turns: readonly Turn[], group: boolean): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const firstUser = turns.findIndex((turn) => turn.role === 'user');
  if (firstUser === -1 && turns.length > 0) out.push({ role: 'user', content: '…' });
  for (const turn of firstUser === -1 ? turns : turns.slice(firstUser)) {
    const speaker = group && turn.role === 'user' ? turn.senderId : undefined;
    const content: AnthropicMessage['content'] = turn.parts.some(isImageWithUrl)
      ? turn.parts.map((part) =>
          isImageWithUrl(part)
            ? { type: 'image' as const, source: { type: 'url' as const, url: part.url } }
            : {
                type: 'text' as const,
                text: part.type === 'text' ? said(part.text, speaker !== undefined) : fileNote(part),
              },
        )
      : textOf(turn, speaker);
    if (Array.isArray(content) && speaker !== undefined)
      content.unshift({ type: 'text', text: `${speaker}:` });
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
