import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UploadProgress } from 'agent-messaging';
import { describe, expect, it, onTestFinished } from 'vitest';
import { devAgentOnMock } from '../../examples/support/try-on-mock.js';
import { fileBlob, sendFile } from '../../examples/upload-file.js';
import { agentMessages, requestsTo, startMock } from './setup.js';

describe('examples/upload-file.ts', () => {
  it('uploads the bytes with progress, sends a file block, and the bytes download back', async () => {
    const { mock, baseUrl } = await startMock();
    const dev = await devAgentOnMock('uploader', { baseUrl });
    onTestFinished(dev.close);
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
    const progress: UploadProgress[] = [];

    const { attachment, message } = await sendFile(
      dev.client,
      dev.conversationId,
      new Blob([bytes], { type: 'application/pdf' }),
      'report.pdf',
      (update) => progress.push(update),
    );

    expect(progress.at(-1)).toEqual({ percent: 1, transferredBytes: 300_000, totalBytes: 300_000 });
    const sent = progress.map((update) => update.transferredBytes);
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
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
      size_bytes: 300_000,
    });
  });

  it('reads a file from disk as a Blob typed by its extension', async () => {
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
