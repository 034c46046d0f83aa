// The client loads ky and its sending code with the first call, and the streaming side with its first
// use (import(), for bundle size). In the published build those are chunks of their own, and a chunk
// can fail to load where a static import could not (a deploy removed it, a browser's fetch of it
// failed). Such a call must fail with the SDK's typed ConnectionError and send nothing, concurrent
// first calls alike, and the next call must load again and work. The package is built as published
// (tsup.config.ts) into a temporary folder; a child process (its own module cache) runs the built
// client against the mock on loopback, whose request log shows what went over the wire.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createMockService, type MockServer } from 'agent-messaging/testing';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { javascript } from '../../tsup.config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dist = '';

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'agent-messaging-first-call-'));
  await build({ ...javascript, outDir: dist, dts: false, silent: true, clean: true });
  writeFileSync(join(dist, 'package.json'), JSON.stringify({ type: 'module' }));
  // The bundled package still imports its external dependencies (nanoid) from node_modules.
  symlinkSync(join(ROOT, 'node_modules'), join(dist, 'node_modules'));
}, 180_000);

afterAll(() => {
  if (dist) rmSync(dist, { recursive: true, force: true });
});

/** The built chunk whose name starts with `prefix` (send-call, open-message-stream). */
function chunk(prefix: string): string {
  const name = readdirSync(dist).find((file) => file.startsWith(`${prefix}-`) && file.endsWith('.js'));
  if (!name) throw new Error(`the build has no ${prefix} chunk`);
  return name;
}

// Run by the child: each phase hides a chunk, makes the calls, puts the chunk back.
const CHILD = `
import { renameSync } from 'node:fs';
import { AgentClient, AgentMessagingError, ConnectionError, MessageStream, toTextStream } from './index.js';
const [baseUrl, apiKey, conversationId, sendChunk, streamChunk, replyChunk] = process.argv.slice(2);
const client = new AgentClient({ apiKey, baseUrl, maxRetries: 0 });
const outcome = (call) =>
  call.then(
    (value) => ({ ok: true, id: value?.message?.id }),
    (error) => ({ ok: false, name: error?.name, typed: AgentMessagingError.is(error),
      connection: ConnectionError.is(error), message: String(error?.message) }),
  );
// The first step of a MessageStream made by hand, or of toTextStream: each loads its machinery then.
const firstOf = (iterable) => iterable[Symbol.asyncIterator]().next();
const hidden = async (file, calls) => {
  renameSync(file, file + '.gone');
  try { return await Promise.all(calls()); } finally { renameSync(file + '.gone', file); }
};
const result = {};
result.sendMissing = await hidden(sendChunk, () => [
  outcome(client.messages.send(conversationId, { text: 'first' })),
  outcome(client.messages.send(conversationId, { text: 'second' })),
]);
result.streamMissing = await hidden(streamChunk, () => [
  outcome(client.messages.stream(conversationId, {})),
  outcome(firstOf(new MessageStream(new ReadableStream()))),
]);
result.textMissing = await hidden(replyChunk, () => [outcome(firstOf(toTextStream(['text'])))]);
result.loaded = await Promise.all([
  outcome(client.messages.send(conversationId, { text: 'third' })),
  outcome(client.messages.send(conversationId, { text: 'fourth' })),
]);
result.shellsLoaded = await Promise.all([
  outcome(firstOf(new MessageStream(new ReadableStream({ start: (c) => c.close() })))),
  firstOf(toTextStream(['text'])),
]);
console.log(JSON.stringify(result));
`;

// A load that never finishes (a chunk's fetch that hangs), made by a module hook in the child.
const HANG_HOOKS = `
export async function load(url, context, next) {
  if (url.includes('/send-call-') || url.includes('/open-message-stream-')) return new Promise(() => {});
  return next(url, context);
}
`;
const HANG = `
import { register } from 'node:module';
register('./hang-hooks.mjs', import.meta.url);
`;
const ABORT_CHILD = `
import { AgentClient, RequestAbortedError } from './index.js';
const [baseUrl, apiKey, conversationId] = process.argv.slice(2);
const client = new AgentClient({ apiKey, baseUrl, maxRetries: 0 });
const controller = new AbortController();
const call = client.messages.send(conversationId, { text: 'never' }, { signal: controller.signal });
controller.abort(new Error('the user left'));
const outcome = await call.then(
  () => ({ ok: true }),
  (error) => ({ ok: false, name: error?.name, aborted: RequestAbortedError.is(error), cause: error?.cause?.message }),
);
console.log(JSON.stringify(outcome));
// The hung load would hold the process open.
process.exit(0);
`;

const TIMEOUT_CHILD = `
import { AgentClient, TimeoutError } from './index.js';
const [baseUrl, apiKey, conversationId] = process.argv.slice(2);
const client = new AgentClient({ apiKey, baseUrl, maxRetries: 0, timeoutMs: 200 });
const outcome = (call) =>
  call.then(
    () => ({ ok: true }),
    (error) => ({ ok: false, name: error?.name, timeout: TimeoutError.is(error), message: error?.message }),
  );
const result = await Promise.all([
  outcome(client.messages.send(conversationId, { text: 'never' })),
  outcome(client.messages.stream(conversationId, {}, { timeoutMs: 100 })),
]);
console.log(JSON.stringify(result));
process.exit(0);
`;

describe('a first call whose code cannot be loaded (the built package)', () => {
  let server: MockServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  it('fails typed and sends nothing; the next calls load it and are sent', async () => {
    const mock = createMockService();
    server = await mock.listen({ port: 0 });
    const { apiKey, conversationId } = await mock.seed({ handle: 'loader_bot' });
    writeFileSync(join(dist, 'child.mjs'), CHILD);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        'child.mjs',
        server.baseUrl,
        apiKey,
        conversationId,
        chunk('send-call'),
        chunk('open-message-stream'),
        chunk('pipe-reply'),
      ],
      { cwd: dist },
    );
    const result = JSON.parse(stdout) as Record<string, Record<string, unknown>[]>;

    const refused = (operation: string) => ({
      ok: false,
      name: 'ConnectionError',
      typed: true,
      connection: true,
      message: expect.stringMatching(
        new RegExp(`^${operation}: the SDK's code for this call could not be loaded`),
      ),
    });
    expect(result.sendMissing).toEqual([refused('messages.send'), refused('messages.send')]);
    // A MessageStream made by hand and toTextStream load their machinery with their first step.
    const unloaded = (message: RegExp) => ({
      ok: false,
      name: 'ConnectionError',
      typed: true,
      connection: true,
      message: expect.stringMatching(message),
    });
    expect(result.streamMissing).toEqual([
      refused('messages.stream'),
      unloaded(/^MessageStream: the SDK's stream reader could not be loaded/),
    ]);
    expect(result.textMissing).toEqual([
      unloaded(/^toTextStream: the SDK's model stream decoders could not be loaded/),
    ]);
    for (const failure of [...(result.sendMissing ?? []), ...(result.streamMissing ?? [])]) {
      expect(failure.message).not.toContain(apiKey);
    }
    expect(result.loaded).toEqual([
      { ok: true, id: expect.stringMatching(/^msg_/) },
      { ok: true, id: expect.stringMatching(/^msg_/) },
    ]);
    // Nothing remembers a failed load: with the chunks back, both work (the reader reads the empty
    // body and finds it ended before message.completed; the decoders hand out the text).
    expect(result.shellsLoaded).toEqual([
      {
        ok: false,
        name: 'ConnectionError',
        typed: true,
        connection: true,
        message: expect.stringMatching(/^The event stream ended before message.completed/),
      },
      { done: false, value: 'text' },
    ]);

    // Over the wire: only the two sends made once the code loaded, each with its own key.
    const sent = mock.requests.filter((entry) => entry.path.startsWith('/v1/conversations/'));
    expect(
      sent.map((entry) => [
        entry.method,
        (JSON.parse(entry.body ?? '{}') as { fallbackText?: string }).fallbackText,
      ]),
    ).toEqual([
      ['POST', 'third'],
      ['POST', 'fourth'],
    ]);
    const keys = sent.map((entry) => entry.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(2);
  }, 60_000);

  it("ends with the call's abort while its code is still loading, and sends nothing", async () => {
    const mock = createMockService();
    const listening = await mock.listen({ port: 0 });
    try {
      const { apiKey, conversationId } = await mock.seed({ handle: 'abort_bot' });
      writeFileSync(join(dist, 'hang-hooks.mjs'), HANG_HOOKS);
      writeFileSync(join(dist, 'hang.mjs'), HANG);
      writeFileSync(join(dist, 'abort-child.mjs'), ABORT_CHILD);
      // The timeout only ends a child that never finishes (the abort not heard): it fails the test.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', './hang.mjs', 'abort-child.mjs', listening.baseUrl, apiKey, conversationId],
        { cwd: dist, timeout: 30_000 },
      );
      expect(JSON.parse(stdout)).toEqual({
        ok: false,
        name: 'RequestAbortedError',
        aborted: true,
        cause: 'the user left',
      });
      expect(mock.requests.filter((entry) => entry.path.startsWith('/v1/conversations/'))).toEqual([]);
    } finally {
      await listening.close();
    }
  }, 60_000);

  it("ends with the call's timeout while its code is still loading, and sends nothing", async () => {
    const mock = createMockService();
    const listening = await mock.listen({ port: 0 });
    try {
      const { apiKey, conversationId } = await mock.seed({ handle: 'timeout_bot' });
      writeFileSync(join(dist, 'hang-hooks.mjs'), HANG_HOOKS);
      writeFileSync(join(dist, 'hang.mjs'), HANG);
      writeFileSync(join(dist, 'timeout-child.mjs'), TIMEOUT_CHILD);
      // The timeout only ends a child that never finishes (the timeouts not kept): it fails the test.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', './hang.mjs', 'timeout-child.mjs', listening.baseUrl, apiKey, conversationId],
        { cwd: dist, timeout: 30_000 },
      );
      const timedOut = (operation: string, ms: number) => ({
        ok: false,
        name: 'TimeoutError',
        timeout: true,
        message: `${operation}: the SDK's code for this call did not load within ${ms} ms, so nothing was sent.`,
      });
      expect(JSON.parse(stdout)).toEqual([timedOut('messages.send', 200), timedOut('messages.stream', 100)]);
      expect(mock.requests.filter((entry) => entry.path.startsWith('/v1/conversations/'))).toEqual([]);
    } finally {
      await listening.close();
    }
  }, 60_000);
});
