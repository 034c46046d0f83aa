import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentClient, type Message, UserClient } from 'agent-messaging';
import { describe, expect, it, onTestFinished } from 'vitest';
import { exportHistory } from '../../examples/export-history.js';
import { newAgent, requestsTo, startMock } from './setup.js';

describe('examples/export-history.ts', () => {
  it('exports every message, tombstones included, paging backwards a hundred at a time', async () => {
    const { mock, baseUrl } = await startMock();
    const agent = await newAgent(mock, baseUrl); // reading history needs no webhook: the agent is a participant
    const { user, sessionToken, conversationId } = agent;
    const posted = Array.from({ length: 230 }, (_, i) =>
      mock.postUserMessage(conversationId, { user_id: user.id, text: `Message ${i + 1}` }),
    );
    await new UserClient({ sessionToken, baseUrl }).messages.unsend(posted[99]?.message.id ?? '');
    const dir = await mkdtemp(join(tmpdir(), 'ams-export-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'history.jsonl');

    const count = await exportHistory(
      new AgentClient({ apiKey: agent.apiKey, baseUrl }),
      conversationId,
      path,
    );

    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.pop()).toBe(''); // every line ends with a newline
    const messages = lines.map((line) => JSON.parse(line) as Message);
    expect(count).toBe(230);
    expect(messages.map((message) => message.sequence)).toEqual(
      Array.from({ length: 230 }, (_, i) => 230 - i),
    );
    expect(messages.find((message) => message.sequence === 100)?.status).toBe('deleted');
    expect(messages.find((message) => message.sequence === 230)?.parts?.[0]?.text).toBe('Message 230');
    const pages = requestsTo(mock, 'GET', /\/messages$/).map((entry) => entry.query);
    expect(pages).toEqual([
      { limit: '100' },
      { limit: '100', before_sequence: '131' },
      { limit: '100', before_sequence: '31' },
    ]);
  });
});
