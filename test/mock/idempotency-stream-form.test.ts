// A key is one request: the plain send and the streaming send (?stream=true) under the same key are
// different requests even with the same body, so the second is refused (422) rather than answered
// with a replay of the other form (a JSON 201 where the caller reads an event stream). The mock keeps
// a key's request as its stream flag and body text (6cae36c); nothing held the flag before.
import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario, textSend } from './helpers.js';

const { ListMessagesResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call } = useDoor(door);

  it('answers 422 to a streaming send under the key of a plain send with the same body', async () => {
    const s = await setupScenario(mock);
    const key = newKey();
    const path = `/v1/conversations/${s.conversationId}/messages`;
    const plain = await call('POST', path, { token: s.apiKey, idempotencyKey: key, body: textSend('one') });
    expect(plain.status).toBe(201);
    const streamed = await call('POST', `${path}?stream=true`, {
      token: s.apiKey,
      idempotencyKey: key,
      body: textSend('one'),
    });
    expect(streamed.status).toBe(422);
    expect(streamed.headers.get('idempotent-replayed')).toBeNull();
    expect(errorOf(streamed).code).toBe('idempotency_key_reused');
    const history = ListMessagesResponse.parse((await call('GET', path, { token: s.apiKey })).body);
    expect(history.messages).toHaveLength(1);
    const logged = mock.requests.filter((entry) => entry.method === 'POST' && entry.path === path);
    expect(logged.map((entry) => [entry.query, entry.headers['idempotency-key']])).toEqual([
      [{}, key],
      [{ stream: 'true' }, key],
    ]);
  });
});
