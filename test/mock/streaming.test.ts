import { type MessageStartedEvent, schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario } from './helpers.js';
import { EventReader, jsonStreamingSend, streamingSend } from './stream-helpers.js';

// The wire schemas as values, from the public namespace.
const { AppendResponse, CompleteResponse, ListMessagesResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const ctx = useDoor(door);
  const start = { schema: 'svc.agent-send.v1', content: [], fallbackText: '', stream: true };
  const patch = (blockId: string, value: string) => ({
    type: 'message.patch',
    patch: { op: 'appendText', blockId, path: '/text', value },
  });

  async function history(conversationId: string, apiKey: string) {
    const answer = await ctx.call('GET', `/v1/conversations/${conversationId}/messages`, { token: apiKey });
    return ListMessagesResponse.parse(answer.body).messages;
  }

  describe('Streamable HTTP: an NDJSON body streamed while the events stream back', () => {
    it('applies each line as it arrives and echoes it as a message.patch', async () => {
      const s = await setupScenario(ctx.mock);
      const { response, writer } = await streamingSend(
        ctx.baseUrl(),
        s.conversationId,
        s.apiKey,
        newKey(),
        start,
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(response.headers.get('request-id')).toMatch(/^req_/);
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      expect(started).toMatchObject({
        type: 'message.started',
        seq: 1,
        schema: 'svc.event.v1',
        conversationId: s.conversationId,
      });
      // A send without a text block gets one empty text block to append to.
      expect(started.message.content).toEqual([
        { id: expect.stringMatching(/^blk_/), type: 'text', text: '' },
      ]);
      const blockId = started.message.content[0]?.id ?? '';

      writer.line(patch(blockId, 'Hello'));
      const [, first] = await events.waitFor(2);
      expect(first).toMatchObject({
        type: 'message.patch',
        seq: 2,
        messageId: started.message.id,
        patch: { op: 'appendText', blockId, path: '/text', value: 'Hello' },
      });
      // The request log fills in while the request is still open.
      const logged = ctx.mock.requests.at(-1);
      expect(logged?.headers['content-type']).toBe('application/x-ndjson');
      expect(logged?.body?.split('\n').filter(Boolean)).toHaveLength(2);
      expect((await history(s.conversationId, s.apiKey))[0]).toMatchObject({
        status: 'streaming',
        revision: 1,
      });

      writer.line(patch(blockId, ', world'));
      writer.line({ type: 'message.completed', fallbackText: 'Hello, world' });
      writer.close();
      await events.waitFor(4);
      expect(await events.done).toBe('end');
      expect(events.events.map((event) => [event.type, event.seq])).toEqual([
        ['message.started', 1],
        ['message.patch', 2],
        ['message.patch', 3],
        ['message.completed', 4],
      ]);
      // message.completed carries the revision at completion (an extension field).
      expect(events.events[3]).toMatchObject({ messageId: started.message.id, revision: 2 });
      expect((await history(s.conversationId, s.apiKey))[0]).toMatchObject({
        id: started.message.id,
        status: 'sent',
        revision: 2,
        parts: [{ type: 'text', text: 'Hello, world' }],
        fallback_text: 'Hello, world',
      });
    });

    it('breaks the connection on a line it cannot apply, keeping the lines before it', async () => {
      const s = await setupScenario(ctx.mock);
      const { response, writer } = await streamingSend(
        ctx.baseUrl(),
        s.conversationId,
        s.apiKey,
        newKey(),
        start,
      );
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      writer.line(patch(blockId, 'kept'));
      await events.waitFor(2);
      writer.line(patch('blk_unknown', 'lost'));
      expect(await events.done).toBeInstanceOf(Error);
      writer.close();
      expect((await history(s.conversationId, s.apiKey))[0]).toMatchObject({
        status: 'streaming',
        parts: [{ text: 'kept' }],
      });
    });

    it('answers 400 before the stream starts when the first line is not a valid send', async () => {
      const s = await setupScenario(ctx.mock);
      const { response, writer } = await streamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), {
        content: [],
      });
      writer.close();
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('schema');
    });
  });

  describe('messages.append and messages.complete: the fallback input after a JSON start', () => {
    it('counts every append as a revision and shows the changes on the open stream', async () => {
      const s = await setupScenario(ctx.mock);
      const response = await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), {
        ...start,
        content: [{ type: 'text', text: 'Hi' }],
      });
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const messageId = started.message.id;
      const blockId = started.message.content[0]?.id ?? '';
      expect(started.message.content[0]?.text).toBe('Hi');
      const append = (value: string) =>
        ctx.call('POST', `/v1/messages/${messageId}/blocks/${blockId}/append`, {
          token: s.apiKey,
          body: { path: '/text', value },
        });
      expect(AppendResponse.parse((await append(' there')).body)).toEqual({
        message_id: messageId,
        block_id: blockId,
        revision: 1,
      });
      expect(AppendResponse.parse((await append('!')).body).revision).toBe(2);
      const complete = await ctx.call('POST', `/v1/messages/${messageId}/complete`, {
        token: s.apiKey,
        body: { status: 'sent', fallbackText: 'Hi there!' },
      });
      expect(CompleteResponse.parse(complete.body)).toEqual({
        message_id: messageId,
        status: 'sent',
        revision: 2,
      });
      await events.waitFor(4);
      expect(await events.done).toBe('end');
      expect(events.events.map((event) => event.type)).toEqual([
        'message.started',
        'message.patch',
        'message.patch',
        'message.completed',
      ]);
      expect(events.events[3]).toMatchObject({ messageId, revision: 2 });
      expect((await history(s.conversationId, s.apiKey))[0]).toMatchObject({
        parts: [{ text: 'Hi there!' }],
        revision: 2,
      });
    });

    it('answers 409 message_not_streaming to append or complete once the message is sent', async () => {
      const s = await setupScenario(ctx.mock);
      const events = new EventReader(
        await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), start),
      );
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const { id } = started.message;
      const blockId = started.message.content[0]?.id ?? '';
      await ctx.call('POST', `/v1/messages/${id}/complete`, { token: s.apiKey, body: { status: 'sent' } });
      const complete = await ctx.call('POST', `/v1/messages/${id}/complete`, {
        token: s.apiKey,
        body: { status: 'sent' },
      });
      expect(complete.status).toBe(409);
      expect(errorOf(complete).code).toBe('message_not_streaming');
      const append = await ctx.call('POST', `/v1/messages/${id}/blocks/${blockId}/append`, {
        token: s.apiKey,
        body: { path: '/text', value: 'late' },
      });
      expect(append.status).toBe(409);
    });

    it('answers 400 naming path for an append that is not to /text', async () => {
      const s = await setupScenario(ctx.mock);
      const events = new EventReader(
        await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), start),
      );
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const answer = await ctx.call(
        'POST',
        `/v1/messages/${started.message.id}/blocks/${started.message.content[0]?.id}/append`,
        {
          token: s.apiKey,
          body: { path: '/title', value: 'x' },
        },
      );
      expect(answer.status).toBe(400);
      expect(errorOf(answer).message).toContain('path');
      events.cancel();
    });
  });

  describe('a client that disconnects', () => {
    it('leaves the message streaming with the text applied so far, ready for append', async () => {
      const s = await setupScenario(ctx.mock);
      const abort = new AbortController();
      const { response, writer } = await streamingSend(
        ctx.baseUrl(),
        s.conversationId,
        s.apiKey,
        newKey(),
        start,
        abort.signal,
      );
      const events = new EventReader(response);
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      writer.line(patch(blockId, 'partial'));
      await events.waitFor(2);
      abort.abort();
      expect(await events.done).toBeInstanceOf(Error);
      const [message] = await history(s.conversationId, s.apiKey);
      expect(message).toMatchObject({ status: 'streaming', revision: 1, parts: [{ text: 'partial' }] });
      const append = await ctx.call('POST', `/v1/messages/${started.message.id}/blocks/${blockId}/append`, {
        token: s.apiKey,
        body: { path: '/text', value: ' and the rest' },
      });
      expect(AppendResponse.parse(append.body).revision).toBe(2);
    });
  });

  describe('replaying a streaming send', () => {
    it('answers a fresh stream with the same message.started and text so far, then follows live, never 409', async () => {
      const s = await setupScenario(ctx.mock);
      const key = newKey();
      const { response, writer } = await streamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, key, start);
      const original = new EventReader(response);
      const [started] = (await original.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      writer.line(patch(blockId, 'so far'));
      await original.waitFor(2);
      // The original request is still open: the replay is not 409.
      const replayResponse = await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, key, start);
      expect(replayResponse.status).toBe(200);
      expect(replayResponse.headers.get('idempotent-replayed')).toBe('true');
      const replay = new EventReader(replayResponse);
      const [restarted] = (await replay.waitFor(1)) as [MessageStartedEvent];
      expect(restarted.seq).toBe(1);
      expect(restarted.message).toEqual({
        id: started.message.id,
        content: [{ id: blockId, type: 'text', text: 'so far' }],
      });
      writer.line(patch(blockId, '!'));
      writer.line({ type: 'message.completed' });
      writer.close();
      const replayed = await replay.waitFor(3);
      expect(replayed.map((event) => [event.type, event.seq])).toEqual([
        ['message.started', 1],
        ['message.patch', 2],
        ['message.completed', 3],
      ]);
      expect(
        (await history(s.conversationId, s.apiKey)).filter((m) => m.sender.id === s.agentId),
      ).toHaveLength(1);
    });

    it('after completion, answers the whole text and message.completed with the final revision', async () => {
      const s = await setupScenario(ctx.mock);
      const key = newKey();
      const body = { ...start, content: [{ type: 'text', text: 'done' }] };
      const first = new EventReader(
        await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, key, body),
      );
      const [started] = (await first.waitFor(1)) as [MessageStartedEvent];
      const blockId = started.message.content[0]?.id ?? '';
      for (const value of [' and', ' dusted']) {
        await ctx.call('POST', `/v1/messages/${started.message.id}/blocks/${blockId}/append`, {
          token: s.apiKey,
          body: { path: '/text', value },
        });
      }
      await ctx.call('POST', `/v1/messages/${started.message.id}/complete`, {
        token: s.apiKey,
        body: { status: 'sent' },
      });
      const replay = new EventReader(
        await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, key, body),
      );
      await replay.waitFor(2);
      expect(await replay.done).toBe('end');
      expect(replay.events.map((event) => event.type)).toEqual(['message.started', 'message.completed']);
      // A reader of the replay knows the text and its revision exactly, without counting patches.
      expect(replay.events[0]).toMatchObject({ message: { content: [{ text: 'done and dusted' }] } });
      expect(replay.events[1]).toMatchObject({ messageId: started.message.id, revision: 2 });
    });
  });

  describe('keep-alive and auto-completion', () => {
    it('completes a streaming message 10 minutes after its last change on the clock', async () => {
      const s = await setupScenario(ctx.mock);
      const events = new EventReader(
        await jsonStreamingSend(ctx.baseUrl(), s.conversationId, s.apiKey, newKey(), start),
      );
      const [started] = (await events.waitFor(1)) as [MessageStartedEvent];
      await ctx.mock.clock.advance(599);
      await ctx.call(
        'POST',
        `/v1/messages/${started.message.id}/blocks/${started.message.content[0]?.id}/append`,
        {
          token: s.apiKey,
          body: { path: '/text', value: 'still here' },
        },
      );
      await ctx.mock.clock.advance(599);
      expect((await history(s.conversationId, s.apiKey))[0]?.status).toBe('streaming');
      await ctx.mock.clock.advance(1);
      expect((await history(s.conversationId, s.apiKey))[0]).toMatchObject({
        status: 'sent',
        parts: [{ text: 'still here' }],
      });
      await events.waitFor(3);
      expect(events.events.at(-1)).toMatchObject({ type: 'message.completed', revision: 1 });
    });
  });
});
