import { type MessageStartedEvent, schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { newKey, setupScenario } from './helpers.js';
import { EventReader, streamingSend } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { ListMessagesResponse } = schemas;

const patchLine = (blockId: string, value: string) => ({
  type: 'message.patch',
  patch: { op: 'appendText', blockId, path: '/text', value },
});

describe.each(DOORS)('a cut_stream fault (%s door)', (door) => {
  const { mock, call, baseUrl } = useDoor(door);

  it.each([1, 2, 3])(
    'after %i events breaks the body with a network error right after exactly those events',
    async (afterEvents) => {
      const s = await setupScenario(mock);
      mock.faults.inject({
        path: '/v1/conversations/*/messages',
        fault: 'cut_stream',
        after_events: afterEvents,
      });
      const before = mock.requests.length;
      const { response, writer } = await streamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), {
        schema: 'svc.agent-send.v1',
        content: [],
        stream: true,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      // Each applied line is one more event; the cut follows the last of them at once.
      const values = Array.from({ length: afterEvents - 1 }, (_, i) => `p${i + 1};`);
      for (const [i, value] of values.entries()) {
        writer.line(patchLine(blockId, value));
        await events.waitFor(i + 2);
      }
      // A hang here (the cut never reaching the reader) fails the test by its timeout.
      expect(await events.done).toBeInstanceOf(TypeError);
      writer.close();
      expect(events.events.map((event) => event.type)).toEqual([
        'message.started',
        ...values.map(() => 'message.patch'),
      ]);
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages).toHaveLength(1);
      expect(history.messages[0]).toMatchObject({
        id: started.message.id,
        status: 'streaming',
        revision: values.length,
        parts: [{ text: values.join('') }],
      });
      // One start only: the cut came after message.started, not as a failed request.
      const starts = mock.requests
        .slice(before)
        .filter((entry) => entry.method === 'POST' && entry.query.stream === 'true');
      expect(starts).toHaveLength(1);
    },
  );

  it('delivers every event written before the cut when several lines arrive in one chunk', async () => {
    const s = await setupScenario(mock);
    mock.faults.inject({ path: '/v1/conversations/*/messages', fault: 'cut_stream', after_events: 4 });
    const { response, writer } = await streamingSend(baseUrl(), s.conversationId, s.apiKey, newKey(), {
      schema: 'svc.agent-send.v1',
      content: [],
      stream: true,
    });
    const events = new EventReader(response);
    const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
    const blockId = started.message.content[0]?.id ?? '';
    // Three lines applied in one go queue three events, the last of which the cut follows.
    writer.raw(
      ['a', 'b', 'c', 'd'].map((value) => `${JSON.stringify(patchLine(blockId, value))}\n`).join(''),
    );
    expect(await events.done).toBeInstanceOf(TypeError);
    writer.close();
    expect(
      events.events.map((event) => (event.type === 'message.patch' ? event.patch.value : event.type)),
    ).toEqual(['message.started', 'a', 'b', 'c']);
    const history = ListMessagesResponse.parse(
      (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
    );
    expect(history.messages[0]).toMatchObject({ status: 'streaming', revision: 3, parts: [{ text: 'abc' }] });
  });
});
