import { schemas } from 'agent-messaging';
import { describe, expect, it } from 'vitest';
import { DOORS, useDoor } from './doors.js';
import { errorOf, newKey, setupScenario } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { Attachment, ListMessagesResponse } = schemas;

describe.each(DOORS)('through the %s door', (door) => {
  const { mock, call, baseUrl } = useDoor(door);

  async function handle(apiKey: string, size = 5) {
    const answer = await call('POST', '/v1/attachments', {
      token: apiKey,
      body: { name: 'notes.txt', mime_type: 'text/plain', size_bytes: size },
    });
    expect(answer.status).toBe(201);
    return Attachment.parse(answer.body);
  }

  describe('attachments.create, files.upload, files.download', () => {
    it('answers an upload handle valid 15 minutes with absolute URLs outside /v1', async () => {
      const s = await setupScenario(mock);
      const before = mock.clock.now().getTime();
      const created = await handle(s.apiKey);
      const after = mock.clock.now().getTime();
      expect(created.attachment_id).toMatch(/^att_/);
      expect(created.upload_url.startsWith(`${baseUrl()}/`)).toBe(true);
      expect(created.download_url.startsWith(`${baseUrl()}/`)).toBe(true);
      expect(new URL(created.upload_url).pathname.startsWith('/v1')).toBe(false);
      expect(Date.parse(created.expires_at)).toBeGreaterThanOrEqual(before + 15 * 60_000);
      expect(Date.parse(created.expires_at)).toBeLessThanOrEqual(after + 15 * 60_000);
    });

    it('takes the bytes with PUT and gives them back with GET, without Authorization', async () => {
      const s = await setupScenario(mock);
      const created = await handle(s.apiKey);
      const put = await fetch(created.upload_url, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(put.status).toBe(200);
      const get = await fetch(created.download_url);
      expect(get.status).toBe(200);
      expect(get.headers.get('content-type')).toBe('text/plain');
      expect(await get.text()).toBe('hello');
    });

    it('serves a file with a non-ASCII or quoted name on both download routes, named as RFC 6266 says', async () => {
      const s = await setupScenario(mock);
      const names = [
        {
          name: 'résumé 日本.txt',
          ascii: 'resume __.txt',
          encoded: 'r%C3%A9sum%C3%A9%20%E6%97%A5%E6%9C%AC.txt',
        },
        {
          name: 'it\'s "v2" (final)*.txt',
          ascii: "it's _v2_ (final)*.txt",
          encoded: 'it%27s%20%22v2%22%20%28final%29%2A.txt',
        },
        // A lone surrogate is valid JSON but not Unicode: the encoded name carries U+FFFD instead.
        {
          name: 'half \ud83d.txt',
          ascii: 'half _.txt',
          encoded: 'half%20%EF%BF%BD.txt',
          decoded: 'half \ufffd.txt',
        },
      ];
      for (const { name, ascii, encoded, decoded = name } of names) {
        const answer = await call('POST', '/v1/attachments', {
          token: s.apiKey,
          body: { name, mime_type: 'text/plain', size_bytes: 5 },
        });
        const created = Attachment.parse(answer.body);
        const put = await fetch(created.upload_url, {
          method: 'PUT',
          headers: { 'content-type': 'text/plain' },
          body: 'hello',
        });
        expect(put.status).toBe(200);
        for (const url of [created.download_url, `${baseUrl()}/_mock/files/${created.attachment_id}`]) {
          const got = await fetch(url);
          expect(got.status, url).toBe(200);
          expect(await got.text()).toBe('hello');
          const disposition = got.headers.get('content-disposition') ?? '';
          expect(disposition).toBe(`attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`);
          expect(decodeURIComponent(disposition.split("UTF-8''")[1] ?? '')).toBe(decoded);
        }
      }
    });

    it('answers 400 for a size that does not match, and the handle stays usable', async () => {
      const s = await setupScenario(mock);
      const created = await handle(s.apiKey);
      const wrong = await fetch(created.upload_url, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain' },
        body: 'hello!',
      });
      expect(wrong.status).toBe(400);
      expect(((await wrong.json()) as { error: { message: string } }).error.message).toContain('size_bytes');
      const right = await fetch(created.upload_url, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(right.status).toBe(200);
    });

    it('answers 410 for an upload after expires_at', async () => {
      const s = await setupScenario(mock);
      const created = await handle(s.apiKey);
      await mock.clock.advance(15 * 60);
      const late = await fetch(created.upload_url, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(late.status).toBe(410);
    });

    it('answers 404 for a download before the upload and for a wrong URL token', async () => {
      const s = await setupScenario(mock);
      const created = await handle(s.apiKey);
      expect((await fetch(created.download_url)).status).toBe(404);
      expect((await fetch(`${created.upload_url}x`, { method: 'PUT', body: 'hello' })).status).toBe(404);
    });

    it('lets a message reference an attachment only after its upload succeeded', async () => {
      const s = await setupScenario(mock);
      const created = await handle(s.apiKey);
      const send = () =>
        call('POST', `/v1/conversations/${s.conversationId}/messages`, {
          token: s.apiKey,
          idempotencyKey: newKey(),
          body: {
            schema: 'svc.agent-send.v1',
            content: [{ type: 'file', attachmentId: created.attachment_id }],
          },
        });
      const early = await send();
      expect(early.status).toBe(400);
      expect(errorOf(early).message).toContain('attachmentId');
      await fetch(created.upload_url, {
        method: 'PUT',
        headers: { 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect((await send()).status).toBe(201);
      const history = ListMessagesResponse.parse(
        (await call('GET', `/v1/conversations/${s.conversationId}/messages`, { token: s.apiKey })).body,
      );
      expect(history.messages[0]?.parts).toEqual([
        { part_index: 0, type: 'file', attachment_id: created.attachment_id },
      ]);
    });

    it('answers 413 payload_too_large naming size_bytes above 100 MiB, and 201 at exactly 100 MiB', async () => {
      const s = await setupScenario(mock);
      const create = (size_bytes: number) =>
        call('POST', '/v1/attachments', {
          token: s.apiKey,
          body: { name: 'big.bin', mime_type: 'application/octet-stream', size_bytes },
        });
      const over = await create(100 * 1024 * 1024 + 1);
      expect(over.status).toBe(413);
      expect(errorOf(over).code).toBe('payload_too_large');
      expect(errorOf(over).message).toContain('size_bytes');
      expect((await create(100 * 1024 * 1024)).status).toBe(201);
      // Below the range is a bad value, not a large one.
      const empty = await create(0);
      expect(empty.status).toBe(400);
      expect(errorOf(empty).message).toContain('size_bytes');
    });
  });
});
