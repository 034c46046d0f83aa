// The emulator page's state reducer, without a browser: fed the mock's real live feed it holds what a
// fresh snapshot holds, and each event answers exactly what the page must redraw.
import { createMockService, type MockEvent, mockSchemas } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
// Private: the page's own state reducer is what this test exercises.
import {
  applyEvent,
  applySnapshot,
  createState,
  EVENT_TYPES,
  MAX_LOG,
  messagesOf,
  type PageState,
  questionsOf,
  typingIn,
} from '../../src/testing/emulator/page/state.js';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');

/** A page state that has read the snapshot of `mock`, and what the reducer made of each event. */
function pageState(snapshot: Parameters<typeof applySnapshot>[1]): PageState {
  const state = createState();
  applySnapshot(state, snapshot, NOW);
  return state;
}

/** The part of a state a snapshot decides (the clock offset depends on when it is read). */
const contents = ({ offsetMs: _offset, typing: _typing, ...rest }: PageState) => rest;

const message = (
  id: string,
  sequence: number,
  sender = 'usr_1',
  metadata?: Record<string, unknown>,
): MockEvent => ({
  type: 'message.created',
  conversation_id: 'cnv_1',
  message: {
    id,
    conversation_id: 'cnv_1',
    sequence,
    sender: { id: sender },
    status: 'sent',
    created_at: new Date(NOW).toISOString(),
    parts: [{ part_index: 0, type: 'text', text: id }],
    metadata: metadata ?? null,
  },
});

const conversation = (title: string | null): MockEvent => ({
  type: 'conversation.updated',
  conversation: {
    id: 'cnv_1',
    kind: 'agent',
    title,
    membership_version: 1,
    participants: [],
    created_at: new Date(NOW).toISOString(),
  },
});

describe('the emulator page state', () => {
  it("follows every event type of the mock's live feed, no more, no fewer", () => {
    const union = mockSchemas.MockEvent._zod.def.options.map(
      (option) => option._zod.def.shape.type._zod.def.values[0],
    );
    expect([...EVENT_TYPES].sort()).toEqual([...union].sort());
  });

  it('fed the live feed, holds what a fresh snapshot of the mock holds', async () => {
    // The bot's webhook answers 200, so the deliveries are in the feed too.
    const mock = createMockService({ fetch: async () => new Response(null, { status: 200 }) });
    const live = pageState(mock.snapshot());
    const changes: [type: string, changed: ReturnType<typeof applyEvent>][] = [];
    // This machine's clock as it is: the page reads the mock clock against it.
    const stop = mock.events.subscribe((event) => changes.push([event.type, applyEvent(live, event)]));
    const { user, conversationId: conversation_id } = await mock.seed();
    mock.postUserMessage(conversation_id, { user_id: user.id, text: 'hello' });
    mock.postUserMessage(conversation_id, { user_id: user.id, text: 'again' });
    mock.clock.advance(3600);
    await mock.idle();
    stop();

    expect(contents(live)).toEqual(contents(pageState(mock.snapshot())));
    const texts = messagesOf(live.conversations.get(conversation_id)!).map((m) => m.parts?.[0]?.text);
    expect(texts).toEqual(['hello', 'again']);
    expect(live.requests.map((r) => `${r.method} ${r.path}`)).toContain('POST /v1/agents');
    expect(live.deliveries.map((d) => [d.type, d.status])).toEqual([
      ['message.received', 200],
      ['message.received', 200],
    ]);
    // The clock event moved the page's clock by the hour the mock moved.
    expect(Math.abs(live.offsetMs - 3600_000)).toBeLessThan(10_000);
    expect(changes.find(([type]) => type === 'clock')?.[1]).toBe(true);
  });

  it('answers when every message must be made again', () => {
    const state = createState();
    applyEvent(state, conversation(null), NOW);
    // A new or changed message is a new object: only it is made again.
    expect(applyEvent(state, message('msg_1', 1), NOW)).toBe(false);
    const typing: MockEvent = {
      type: 'typing',
      conversation_id: 'cnv_1',
      actor_id: 'agt_1',
      state: 'start',
      expires_at: new Date(NOW + 5000).toISOString(),
    };
    expect(applyEvent(state, typing, NOW)).toBe(false);
    // Expiries and deadlines may have passed.
    const clock = applyEvent(state, { type: 'clock', now: new Date(NOW + 60_000).toISOString() }, NOW);
    expect(clock).toBe(true);
    expect(state.offsetMs).toBe(60_000);
    const unknown = { type: 'something.new' } as unknown as MockEvent;
    expect(applyEvent(state, unknown, NOW)).toBe(false);
  });

  it('keeps the messages of a conversation across its updates, in sequence order', () => {
    const state = createState();
    applyEvent(state, conversation(null), NOW);
    applyEvent(state, message('msg_2', 2), NOW);
    applyEvent(state, message('msg_1', 1), NOW);
    expect(applyEvent(state, conversation('Renamed'), NOW)).toBe(true);
    const kept = state.conversations.get('cnv_1')!;
    expect(kept.title).toBe('Renamed');
    expect(messagesOf(kept).map((m) => m.id)).toEqual(['msg_1', 'msg_2']);
  });

  it('shows typing until its expiry on the mock clock, or until that sender writes', () => {
    const state = createState();
    applyEvent(state, conversation(null), NOW);
    const expires_at = new Date(NOW + 5000).toISOString();
    applyEvent(
      state,
      { type: 'typing', conversation_id: 'cnv_1', actor_id: 'agt_1', state: 'start', expires_at },
      NOW,
    );
    expect(typingIn(state, 'cnv_1', NOW)).toEqual(['agt_1']);
    expect(typingIn(state, 'cnv_1', NOW + 5001)).toEqual([]);
    // The mock clock ahead of this machine's: the expiry is reached sooner.
    state.offsetMs = 6000;
    expect(typingIn(state, 'cnv_1', NOW)).toEqual([]);
    state.offsetMs = 0;
    applyEvent(state, message('msg_1', 1, 'agt_1'), NOW);
    expect(typingIn(state, 'cnv_1', NOW)).toEqual([]);
  });

  it("reads questions from the metadata of the agent's messages: pending, re-asked, ended, replaced", () => {
    const state = createState();
    applyEvent(state, conversation(null), NOW);
    const asks = { question: { name: 'confirm', timeout_ms: 60_000 } };
    // A message that asks or ends a question redraws the conversation: its earlier messages read anew.
    expect(applyEvent(state, message('msg_1', 1, 'agt_1', asks), NOW)).toBe(true);
    applyEvent(state, message('msg_2', 2, 'agt_1', { question: { id: 'msg_1', name: 'confirm' } }), NOW);
    applyEvent(state, message('msg_3', 3, 'agt_1', { question: 'not ours' }), NOW);
    const read = () => {
      const questions = questionsOf(state.conversations.get('cnv_1')!);
      return [...questions].map(([id, q]) => [id, q.id, q.status, q.deadlineMs]);
    };
    expect(read()).toEqual([
      ['msg_1', 'msg_1', 'pending', NOW + 60_000],
      ['msg_2', 'msg_1', 'pending', NOW + 60_000],
    ]);
    // A newer question replaces the pending one; a run's end names its question and outcome.
    applyEvent(state, message('msg_4', 4, 'agt_1', { question: { name: 'why' } }), NOW);
    expect(read().map(([id, , status]) => [id, status])).toEqual([
      ['msg_1', 'replaced'],
      ['msg_2', 'replaced'],
      ['msg_4', 'pending'],
    ]);
    applyEvent(
      state,
      message('msg_5', 5, 'agt_1', { question_end: { id: 'msg_4', outcome: 'timed_out' } }),
      NOW,
    );
    expect(read().at(-1)).toEqual(['msg_4', 'msg_4', 'timed_out', undefined]);
  });

  it(`keeps the latest ${MAX_LOG} requests and deliveries`, () => {
    const state = createState();
    for (let i = 0; i < MAX_LOG + 5; i++) {
      const changed = applyEvent(
        state,
        {
          type: 'request',
          request: { method: 'GET', path: `/v1/r/${i}`, query: {}, headers: {}, body: null },
        },
        NOW,
      );
      expect(changed).toBe(false);
    }
    expect(state.requests).toHaveLength(MAX_LOG);
    expect(state.requests[0]?.path).toBe('/v1/r/5');
    expect(state.requests.at(-1)?.path).toBe(`/v1/r/${MAX_LOG + 4}`);
  });
});
