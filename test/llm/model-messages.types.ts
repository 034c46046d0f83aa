// Type checks only (tsc, not vitest): what toModelMessages gives is what each real SDK's call takes.
// Never called; no request is made.
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { type Message, toModelMessages } from 'agent-messaging';
import { streamText } from 'ai';
import OpenAI from 'openai';

export async function historyFitsEachSdk(messages: Message[], agentId: string) {
  const openai = new OpenAI({ apiKey: 'unused' });
  await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      ...toModelMessages(messages, { agentId, format: 'openai' }),
    ],
  });
  streamText({
    model: createOpenAI({ apiKey: 'unused' }).chat('gpt-4o-mini'),
    messages: toModelMessages(messages, { agentId, format: 'ai-sdk' }),
  });
  await new Anthropic({ apiKey: 'unused' }).messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    messages: toModelMessages(messages, { agentId, format: 'anthropic' }),
  });
  // The check is live: the AI SDK's URL file parts are not OpenAI chat content.
  await openai.chat.completions.create({
    model: 'gpt-4o-mini',
    // @ts-expect-error ai-sdk messages are not chat-completions messages
    messages: toModelMessages(messages, { agentId, format: 'ai-sdk' }),
  });
}
