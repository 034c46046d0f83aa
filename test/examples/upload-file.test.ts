import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UploadProgress } from 'agent-messaging';
import { describe, expect, it, onTestFinished } from 'vitest';
import { devAgentOnMock } from '../../examples/support/try-on-mock.js';
import { fileBlob, sendFile } from '../../examples/upload-file.js';
import { agentMessages, requestsTo, startMock } from './setup.js';

describe('examples/upload-file.ts', () => {
  it('uploads a file from disk with progress as it goes, and sends it as a file block', async () => {
    const { mock, baseUrl } = await startMock();
    const dev = await devAgentOnMock('uploader', { baseUrl });
    onTestFinished(dev.close);
    const dir = await mkdtemp(join(tmpdir(), 'ams-upload-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const bytes = new Uint8Array(1_000_000).map((_, i) => (i * 7) % 251);
    await writeFile(join(dir, 'report.pdf'), bytes);
    const progress: UploadProgress[] = [];

    const { attachment, message } = await sendFile(
      dev.client,
      dev.conversationId,
      await fileBlob(join(dir, 'report.pdf')),
      'report.pdf',
      (update) => progress.push(update),
    );

    // The file is read and reported in chunks while it is sent, not only once at the end.
    const sent = progress.map((update) => update.transferredBytes);
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.every((bytesSoFar, i) => i === 0 || bytesSoFar > (sent[i - 1] ?? 0))).toBe(true);
    expect(progress.at(-1)).toEqual({ percent: 1, transferredBytes: 1_000_000, totalBytes: 1_000_000 });
    const download = await fetch(attachment.download_url);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);

    const [stored] = await agentMessages(dev.client, dev.conversationId, dev.agentId);
    expect(stored?.id).toBe(message.id);
    expect(stored?.parts).toMatchObject([
      { type: 'text', text: 'Here is report.pdf.' },
      { type: 'file', attachment_id: attachment.attachment_id },
    ]);
    const [handle] = requestsTo(mock, 'POST', /^\/v1\/attachments$/);
    expect(JSON.parse(handle?.body ?? '')).toEqual({
      name: 'report.pdf',
      mime_type: 'application/pdf',
      size_bytes: 1_000_000,
    });
  });

  it('types a file by its extension, and falls back to application/octet-stream', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ams-upload-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'notes.json'), '{"a":1}');
    await writeFile(join(dir, 'data.bin'), 'raw');

    const json = await fileBlob(join(dir, 'notes.json'));
    const unknown = await fileBlob(join(dir, 'data.bin'));

    expect([json.type, await json.text()]).toEqual(['application/json', '{"a":1}']);
    expect(unknown.type).toBe('application/octet-stream');
  });
});
