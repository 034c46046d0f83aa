// A client that stops reading a streaming send and cancels its body (a `break` out of the stream)
// closes the connection: the mock sees the cancel and lets the stream go, and the message stays
// `streaming` with what was applied, ready to be continued through append.
import { AgentClient, type MessageStartedEvent, schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, until, useDoor } from './doors.js';
import { newKey, type Scenario, setupScenario } from './helpers.js';
import { EventReader, jsonStreamingSend, streamingSend } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse } = schemas;

const start = { schema: 'svc.agent-send.v1', content: [{ type: 'text', text: 'begun' }], stream: true };

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call, baseUrl } = useDoor(door);

  async function onlyMessage(s: Scenario) {
    const answer = await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey });
    const { messages } = ListMessagesResponse.parse(answer.body);
    expect(messages).toHaveLength(1);
    return messages[0];
  }

  describe('a client that cancels the body of a streaming send', () => {
    it('counts the stream as open while it is read, also in the snapshot', async () => {
      const s = await setupScenario(mock);
      expect(mock.openStreams).toBe(0);
      const events = new EventReader(
        await jsonStreamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), start),
      );
      await events.waitFor(1);
      expect(mock.openStreams).toBe(1);
      expect(mock.snapshot().open_streams).toBe(1);
      events.cancel();
      await until(() => mock.openStreams === 0);
      expect(mock.snapshot().open_streams).toBe(0);
    });

    it('is seen by the mock: no stream stays open, and the message stays streaming (JSON start)', async () => {
      const s = await setupScenario(mock);
      const events = new EventReader(
        await jsonStreamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), start),
      );
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      events.cancel();
      // A cancel the mock never sees hangs here, and the test fails by its timeout.
      await until(() => mock.openStreams === 0);
      expect(await onlyMessage(s)).toMatchObject({
        id: started.message.id,
        status: 'streaming',
        revision: 0,
        parts: [{ text: 'begun' }],
      });
    });

    it('is seen by the mock: no stream stays open, and the lines applied before it stay (NDJSON body)', async () => {
      const s = await setupScenario(mock);
      const { response, writer } = await streamingSend(
        baseUrl(),
        s.conversationId,
        s.apiKey,
        newKey(),
        start,
      );
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      writer.line({
        type: 'message.patch',
        patch: { op: 'appendText', blockId, path: '/text', value: ' and more' },
      });
      await events.waitFor(2);
      events.cancel();
      await until(() => mock.openStreams === 0);
      writer.close();
      expect(await onlyMessage(s)).toMatchObject({
        status: 'streaming',
        revision: 1,
        parts: [{ text: 'begun and more' }],
      });
    });

    it('a break out of client.messages.stream() closes the connection, and the message stays streaming', async () => {
      const s = await setupScenario(mock);
      const client = new AgentClient({ apiKey: s.apiKey, baseUrl: baseUrl() });
      const stream = await client.messages.stream(s.conversationId, {
        content: [{ type: 'text', text: 'begun' }],
      });
      const seen: string[] = [];
      for await (const event of stream) {
        seen.push(event.type);
        expect(mock.openStreams).toBe(1);
        break;
      }
      expect(seen).toEqual(['message.started']);
      await until(() => mock.openStreams === 0);
      expect(await onlyMessage(s)).toMatchObject({ status: 'streaming', parts: [{ text: 'begun' }] });
    });

    it('leaves no stream open once the message completes', async () => {
      const s = await setupScenario(mock);
      const events = new EventReader(
        await jsonStreamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), start),
      );
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      await call('POST', `/v1/messages/${started.message.id}/complete`, {
        token: s.apiKey,
        body: { status: 'sent' },
      });
      expect(await events.done).toBe('end');
      expect(mock.openStreams).toBe(0);
    });
  });
});
