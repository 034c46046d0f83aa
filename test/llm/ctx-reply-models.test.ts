// ctx.reply(modelStream) in a handler: the tool call shows as typing and reaches onToolCall, never the text.
import type { ToolCallInfo } from 'agent-messaging';
import { stepCountIs, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { botWithModel, weather } from './model-clients.js';

describe('ctx.reply with a model stream', () => {
  it('keeps typing on while the tool runs, calls onToolCall, and writes only the text', async () => {
    const { model, mock, seed, bot, aiSdk: provider } = await botWithModel();
    const calls: ToolCallInfo[] = [];
    const typingAtCall: string[] = [];
    const typing = () =>
      mock.requests
        .filter((entry) => entry.path.endsWith('/typing'))
        .map((entry) => JSON.parse(entry.body ?? '{}').state);
    bot.on('message.received', async (ctx) => {
      const result = streamText({
        model: provider.chat('gpt-test'),
        prompt: ctx.text,
        tools: { weather },
        stopWhen: stepCountIs(3),
      });
      await ctx.reply(result, {
        onToolCall: (call) => {
          calls.push(call);
          typingAtCall.push(...typing());
        },
      });
    });
    model.push(
      { text: 'Let me look.', toolCalls: [{ name: 'weather', arguments: { city: 'Zanzibar-ARGS' } }] },
      { text: 'Sunny.' },
    );

    mock.postUserMessage(seed.conversationId, { user_id: seed.user.id, text: 'Weather?' });
    await mock.idle();

    const { messages } = await bot.client.conversations.listMessages(seed.conversationId);
    const reply = messages.find((message) => message.sender.id === seed.agent.id);
    expect(reply?.parts?.map((part) => part.text)).toEqual(['Let me look.\n\nSunny.']);
    expect(JSON.stringify(messages)).not.toContain('Zanzibar');
    expect(calls).toMatchObject([{ name: 'weather', source: 'ai-sdk' }]);
    // Typing was on when the status callback ran, and is off once the reply ended.
    expect(typingAtCall.at(-1)).toBe('start');
    expect(typing().at(-1)).toBe('stop');
  });
});
