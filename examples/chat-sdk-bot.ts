// Run: `npm run mock` in one terminal, then `npx tsx examples/chat-sdk-bot.ts` (PORT=3000 by default).
// With OPENAI_API_KEY set the answers come from OpenAI through the AI SDK; without it, from a fake
// model on a loopback port.
//
// A bot written for Vercel's Chat SDK, unchanged, on the Agent Messaging Service: the service is one
// more platform adapter. It follows Chat SDK's own getting-started bot: a mention subscribes the
// thread and streams an AI SDK answer, later messages in the thread are answered, and a button click
// is handled. The adapter streams each answer over one request (never post-and-edit), and derives
// every reply's key from the delivery, so the service's redelivery never posts twice.

import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createMemoryState } from '@chat-adapter/state-memory';
import { type ChatSdkAdapterOptions, createAgentMessagingAdapter } from 'agent-messaging/chat-sdk';
import { toNodeFetchHandler } from 'agent-messaging/node';
import { type LanguageModel, streamText } from 'ai';
import { Actions, Button, Card, CardText, Chat, type StateAdapter } from 'chat';
import { startFakeModel } from './support/fake-model.js';
import { chatOnMock, credentialsFromEnv, webhookUrl } from './support/try-on-mock.js';

/** What the bot needs: the service's credentials, a model, and Chat SDK's state (memory or Redis). */
export interface ChatSdkBotOptions {
  service: ChatSdkAdapterOptions;
  model: LanguageModel;
  state?: StateAdapter;
}

/** Chat SDK's getting-started bot, with this service as its platform. */
export function createChatSdkBot({ service, model, state = createMemoryState() }: ChatSdkBotOptions) {
  const chat = new Chat({
    userName: 'helper',
    adapters: { agentMessaging: createAgentMessagingAdapter(service) },
    state,
    logger: 'silent',
  });

  chat.onNewMention(async (thread, message) => {
    await thread.subscribe();
    const result = streamText({ model, prompt: message.text });
    await thread.post(result.fullStream);
  });

  chat.onSubscribedMessage(async (thread, message) => {
    if (message.text.toLowerCase().includes('menu')) {
      await thread.post(
        Card({
          title: 'What next?',
          children: [
            CardText('Pick one:'),
            Actions([
              Button({ id: 'weather', label: 'Weather', value: 'weather' }),
              Button({ id: 'news', label: 'News', value: 'news' }),
            ]),
          ],
        }),
      );
      return;
    }
    await thread.post(`Noted: ${message.text}`);
  });

  chat.onAction(['weather', 'news'], async (event) => {
    await event.thread?.post(`You picked ${event.value}.`);
  });

  return chat;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { createOpenAI } = await import('@ai-sdk/openai');
  const credentials = await credentialsFromEnv('chat_sdk_bot');
  // The real-provider line: createOpenAI() reads OPENAI_API_KEY; otherwise the fake model answers.
  // On a chat-completions server use `.chat(...)`: `openai('model')` calls the Responses API.
  const openai = process.env.OPENAI_API_KEY
    ? createOpenAI()
    : createOpenAI({ apiKey: 'fake', baseURL: (await startFakeModel()).openaiBaseUrl });
  const chat = createChatSdkBot({ service: credentials, model: openai.chat('gpt-4o-mini') });
  const server = createServer(
    toNodeFetchHandler({ fetch: (request) => chat.webhooks.agentMessaging(request) }),
  );
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  await once(server, 'listening');
  const url = webhookUrl(server, '/webhook');
  console.log(`Chat SDK bot listening on ${url}`);
  // On the real service, point the agent's webhook at the bot's public URL once (see README.md).
  const { client } = chat.getAdapter('agentMessaging');
  await chatOnMock(client, credentials, url, '@helper hi');
}
