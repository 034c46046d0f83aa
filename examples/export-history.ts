// Run: `npm run mock` in one terminal, then `npx tsx examples/export-history.ts [out.jsonl]`.
// (On the real service: AMS_BASE_URL, AMS_API_KEY and AMS_CONVERSATION_ID.)
//
// Exports a conversation's whole history to a JSON Lines file, one message per line. The history
// iterator pages backwards by itself (100 messages a page, `before_sequence`), and the file is written
// as the pages arrive, so a long conversation never sits in memory at once.

import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { AgentClient } from 'agent-messaging';
import { devAgentOnMock } from './support/try-on-mock.js';

/**
 * Writes every message of the conversation to `path`, newest first as the service pages them (sort by
 * `sequence` to read it in order); resolves with the number of messages. Unsent messages appear as
 * tombstones (`status: 'deleted'`), so the sequences have no holes.
 */
export async function exportHistory(
  client: AgentClient,
  conversationId: string,
  path: string,
): Promise<number> {
  let count = 0;
  // pipeline() waits for the file to drain between writes, and closes it and rethrows if a page
  // fails midway (the lines written so far stay in the file).
  await pipeline(async function* () {
    for await (const message of client.conversations.history(conversationId)) {
      count += 1;
      yield `${JSON.stringify(message)}\n`;
    }
  }, createWriteStream(path));
  return count;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { AMS_API_KEY, AMS_CONVERSATION_ID } = process.env;
  // Your agent (baseUrl from AMS_BASE_URL) and conversation; else a throwaway agent on the mock, with
  // a user who has written it 150 messages (two pages).
  const { client, conversationId, close } =
    AMS_API_KEY && AMS_CONVERSATION_ID
      ? { client: new AgentClient({ apiKey: AMS_API_KEY }), conversationId: AMS_CONVERSATION_ID, close() {} }
      : await devAgentOnMock('exporter', { userMessages: 150 });

  const path = process.argv[2] ?? `history-${conversationId}.jsonl`;
  const count = await exportHistory(client, conversationId, path);
  console.log(`Exported ${count} messages of ${conversationId} to ${path}`);
  await close();
}
