// Issue 17, first row: the first write of a reply goes at once, then writes coalesce; the request
// counts stay at 1 per reply on `stream` and at most ceil(chars/256)+2 on `append`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMessages, pieces, requestsSince, startWorld, textOf, type World } from './harness.js';

let world: World;
beforeAll(async () => {
  world = await startWorld('loopback');
});
afterAll(() => world?.close());

async function* tokens(parts: readonly string[]) {
  yield* parts;
}

const parts = pieces(400);
const text = parts.join('');

describe('the first token of a reply', () => {
  it('on append is sent alone in the first append, and the reply takes at most ceil(chars/256)+2 requests', async () => {
    const before = world.mock.requests.length;
    const result = await world.client.messages.reply(world.conversationId, tokens(parts), {
      transport: 'append',
    });
    const requests = requestsSince(world, before);
    const appends = requests.filter((entry) => entry.path.endsWith('/append'));
    const completes = requests.filter((entry) => entry.path.endsWith('/complete'));
    expect(JSON.parse(appends[0]!.body!)).toEqual({ path: '/text', value: parts[0] });
    expect(appends.length + completes.length).toBeLessThanOrEqual(Math.ceil(text.length / 256) + 2);
    expect(result.text).toBe(text);
    expect(textOf((await agentMessages(world)).at(-1)!)).toBe(text);
  });

  it('on stream is the first patch line of the one request the reply makes', async () => {
    const before = world.mock.requests.length;
    const result = await world.client.messages.reply(world.conversationId, tokens(parts), {
      transport: 'stream',
    });
    const requests = requestsSince(world, before).filter((entry) => entry.method === 'POST');
    expect(requests).toHaveLength(1);
    const lines = requests[0]!
      .body!.split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(lines[1]).toMatchObject({ type: 'message.patch', patch: { value: parts[0] } });
    expect(result.text).toBe(text);
  });
});
