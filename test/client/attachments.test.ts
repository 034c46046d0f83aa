import { type UploadProgress, ValidationError } from 'agent-messaging';
import { describe, expect, test } from 'vitest';
import { bodyOf, rejectionOf, useWorld } from './world.js';

const bytes = (size: number) => Uint8Array.from({ length: size }, (_, i) => i % 251);

describe.each(['msw', 'loopback'] as const)('attachments.create and attachments.upload over %s', (door) => {
  const w = useWorld(door);

  test('create answers an upload handle for a snake_case request', async () => {
    const handle = await w.client.attachments.create({
      name: 'a.txt',
      mime_type: 'text/plain',
      size_bytes: 5,
    });

    expect(handle.attachment_id).toMatch(/^att_/);
    expect(new URL(handle.upload_url).protocol).toMatch(/^https?:$/);
    expect(w.requests()[0]).toMatchObject({ method: 'POST', path: '/v1/attachments' });
    expect(bodyOf(w.requests()[0])).toEqual({ name: 'a.txt', mime_type: 'text/plain', size_bytes: 5 });
  });

  test('upload creates the handle, PUTs the bytes without the bearer token, and reports progress', async () => {
    const data = bytes(70_000);
    const progress: UploadProgress[] = [];

    const handle = await w.client.attachments.upload(data, {
      name: 'photo.png',
      mime_type: 'image/png',
      onProgress: (event) => progress.push(event),
    });

    expect(bodyOf(w.requests()[0])).toEqual({
      name: 'photo.png',
      mime_type: 'image/png',
      size_bytes: 70_000,
    });
    const put = w.fetched.find((request) => request.method === 'PUT');
    expect(put?.url).toBe(handle.upload_url);
    expect(put?.headers.get('content-type')).toBe('image/png');
    expect(put?.headers.has('authorization')).toBe(false);
    expect(progress.at(-1)).toEqual({ percent: 1, transferredBytes: 70_000, totalBytes: 70_000 });
    // In-memory bytes are reported as they go, not once at the end.
    const partial = progress.filter((event) => event.transferredBytes > 0 && event.percent < 1);
    expect(partial.length).toBeGreaterThan(0);
    expect(progress.map((event) => event.transferredBytes)).toEqual(
      [...progress.map((event) => event.transferredBytes)].sort((a, b) => a - b),
    );
    const download = await fetch(handle.download_url);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(data);
    const { message } = await w.client.messages.send(w.conversationId, {
      content: [{ type: 'image', attachmentId: handle.attachment_id }],
    });
    expect(message.status).toBe('sent');
  });

  test('upload takes any Uint8Array, a view over a SharedArrayBuffer or a Node Buffer included', async () => {
    const shared = new Uint8Array(new SharedArrayBuffer(6));
    shared.set([1, 2, 3, 4, 5, 6]);
    const viaShared: Uint8Array = shared;

    const first = await w.client.attachments.upload(viaShared, {
      name: 'a.bin',
      mime_type: 'application/octet-stream',
    });
    const second = await w.client.attachments.upload(Buffer.from('hello'), {
      name: 'b.txt',
      mime_type: 'text/plain',
    });

    expect(new Uint8Array(await (await fetch(first.download_url)).arrayBuffer())).toEqual(
      new Uint8Array([1, 2, 3, 4, 5, 6]),
    );
    expect(await (await fetch(second.download_url)).text()).toBe('hello');
  });

  test("upload of a File takes the file's name and type", async () => {
    const file = new File([bytes(10)], 'notes.txt', { type: 'text/plain' });

    const handle = await w.client.attachments.upload(file);

    expect(bodyOf(w.requests()[0])).toEqual({ name: 'notes.txt', mime_type: 'text/plain', size_bytes: 10 });
    expect((await fetch(handle.download_url)).headers.get('content-type')).toContain('text/plain');
  });
});

describe('attachments input', () => {
  const w = useWorld('msw');

  test('upload of bytes without a mime_type is a ValidationError and sends nothing', async () => {
    const error = await rejectionOf(w.client.attachments.upload(bytes(3), { name: 'x.bin' }));

    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('mime_type');
    expect(w.fetched).toHaveLength(0);
  });

  test('upload of an empty file is a ValidationError naming size_bytes', async () => {
    const error = await rejectionOf(
      w.client.attachments.upload(new Uint8Array(0), { name: 'x', mime_type: 'a/b' }),
    );

    expect((error as ValidationError).field).toBe('size_bytes');
    expect(w.fetched).toHaveLength(0);
  });
});
