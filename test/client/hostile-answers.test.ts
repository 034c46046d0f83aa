// A service that misbehaves on purpose (issue 11): answers too large to hold, gzip bombs, headers that
// echo the bearer token, and a mime_type that would forge a header. A tiny loopback server plays the
// hostile service; the mock shows the shared rule on the service side.
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { gzipSync } from 'node:zlib';
import { AgentClient, ApiError, InvalidResponseError, NotFoundError, ValidationError } from 'agent-messaging';
import { afterEach, describe, expect, test } from 'vitest';
import { rejectionOf, useWorld } from './world.js';

const TOKEN = 'ams_secret_token_0123456789';
const MiB = 1024 * 1024;
const CONVERSATION = {
  id: 'cnv_1',
  participant_count: 2,
  last_sequence: 0,
  created_at: '2026-01-01T00:00:00Z',
};

let server: Server | undefined;
afterEach(async () => {
  const open = server;
  server = undefined;
  if (!open) return;
  open.closeAllConnections();
  await new Promise((resolve) => open.close(resolve));
});

/** A loopback server answering every request with `answer`; resolves with a client pointed at it. */
async function hostile(answer: (response: ServerResponse) => void, maxResponseBytes?: number) {
  server = createServer((_request, response) => answer(response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return new AgentClient({ apiKey: TOKEN, baseUrl: `http://127.0.0.1:${port}`, maxResponseBytes });
}

/**
 * An answer of `status` whose JSON body starts with `head` and then never ends: written as fast as the
 * client reads, up to 64 MiB, until the client hangs up. `sent` and `closed` say how far it got.
 */
function endlessAnswer(status: number, head: string) {
  const state = { sent: 0, closed: false };
  const handler = (response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.write(head);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while (!state.closed && state.sent < 64 * MiB) {
        state.sent += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end('"}}');
    };
    response.on('close', () => {
      state.closed = true;
    });
    pump();
  };
  return { state, handler };
}

describe('answer bodies are read under maxResponseBytes', () => {
  test('an endless answer is an InvalidResponseError once the cap is passed, and reading stops there', async () => {
    const endless = endlessAnswer(200, '{"conversation":{"id":"cnv_1","pad":"');
    const client = await hostile(endless.handler, MiB);

    const error = await rejectionOf(client.conversations.retrieve('cnv_1'));

    expect(InvalidResponseError.is(error)).toBe(true);
    expect((error as Error).message).toContain('maxResponseBytes');
    await expect.poll(() => endless.state.closed).toBe(true);
    expect(endless.state.sent).toBeLessThan(16 * MiB);
  });

  test('a gzip bomb is refused once it inflates past the cap', async () => {
    const bomb = gzipSync(Buffer.from(`{"conversation":{"id":"cnv_1","pad":"${' '.repeat(64 * MiB)}"}}`));
    expect(bomb.length).toBeLessThan(MiB);
    const client = await hostile((response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(bomb);
    }, 2 * MiB);

    const error = await rejectionOf(client.conversations.retrieve('cnv_1'));

    expect(InvalidResponseError.is(error)).toBe(true);
    expect((error as Error).message).toContain(`larger than ${2 * MiB} bytes`);
  });

  test('an answer under the cap is read whole', async () => {
    const client = await hostile((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ conversation: { ...CONVERSATION, pad: 'a'.repeat(100_000) } }));
    }, MiB);

    const { conversation } = await client.conversations.retrieve('cnv_1');

    expect(conversation.id).toBe('cnv_1');
  });

  // A typed ApiError, not an InvalidResponseError: the status is a whole, trustworthy answer (a proxy's
  // huge 404 page is still a NotFoundError; a 503 is still retried); only the body's code is lost.
  test('an endless error body is the typed ApiError without its code, read no further than the cap', async () => {
    const endless = endlessAnswer(404, '{"error":{"code":"not_found","message":"');
    const client = await hostile(endless.handler, MiB);

    const error = await rejectionOf(client.conversations.retrieve('cnv_1'));

    expect(NotFoundError.is(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, code: undefined });
    await expect.poll(() => endless.state.closed).toBe(true);
    // ky's own error-body read stops at 10 MiB; the client's cap (1 MiB here) stops it well before.
    expect(endless.state.sent).toBeLessThan(6 * MiB);
  });
});

describe('the bearer token never shows in an error', () => {
  test('headers and messages that echo it are redacted, in the error, its inspect and its JSON', async () => {
    const client = await hostile((response) => {
      response.writeHead(400, {
        'content-type': 'application/json',
        'x-echo-authorization': `Bearer ${TOKEN}`,
        'request-id': 'req_1',
      });
      response.end(JSON.stringify({ error: { code: 'invalid_request', message: `bad token ${TOKEN}` } }));
    });

    const error = await rejectionOf(client.conversations.retrieve('cnv_1'));

    expect(ApiError.is(error)).toBe(true);
    expect((error as ApiError).headers['x-echo-authorization']).toBe('Bearer ***');
    expect((error as ApiError).requestId).toBe('req_1');
    const shown = `${String(error)} ${inspect(error, { depth: 10, showHidden: true })} ${JSON.stringify(error)}`;
    expect(shown).not.toContain(TOKEN);
  });
});

describe('attachments.create: mime_type is a header-safe value', () => {
  const w = useWorld('msw');

  test.each(['text/plain\r\nx-forged: 1', 'text/plain; name="résumé"', 'text/plain; charset=utf-8 '])(
    'the SDK refuses %j before sending',
    async (mime) => {
      const error = await rejectionOf(
        w.client.attachments.create({ name: 'a', mime_type: mime, size_bytes: 1 }),
      );

      expect(ValidationError.is(error)).toBe(true);
      expect((error as ValidationError).field).toBe('mime_type');
      expect(w.requests()).toHaveLength(0);
    },
  );

  test('the mock answers such a value with 400', async () => {
    const response = await fetch(`${w.baseUrl}/v1/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a', mime_type: 'text/plain; name="résumé"', size_bytes: 1 }),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });

  test('a parameter in visible ASCII is accepted', async () => {
    const handle = await w.client.attachments.create({
      name: 'a.txt',
      mime_type: 'text/plain; charset=utf-8',
      size_bytes: 1,
    });

    expect(handle.attachment_id).toMatch(/^att_/);
  });
});
