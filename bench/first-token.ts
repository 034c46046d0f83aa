// Measurement 3b (issue 17, first row): time to first token. From the moment a token is written to
// the moment a reader following the message with `messages.stream()` sees it, on the `stream` and
// `append` transports, through the loopback door: the first token, the first after a pause (a model's
// tool call), and every token (p50/p95) at a model's pace; with the requests each reply made. The
// floor is a raw NDJSON patch line (or a raw append call) over the same loopback, to the same reader.
import { type Bot, createBot, type StreamBody } from '../src/index.js';
import { AGENT_SEND_SCHEMA } from '../src/schemas/common.js';
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome, type Row } from './lib/report.js';
import { fmt, median, percentile } from './lib/stats.js';
import { startWorld, type World } from './lib/world.js';
import { tokens } from './reply-requests.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Tokens per reply, one every PACE_MS (about 100 tokens/s, a fast model), a pause in the middle. */
const TOKENS = 100;
const PACE_MS = 10;
const PAUSE_AT = 50;
const PAUSE_MS = 300;
const GOAL_MS = 5;
const FLOORS_PER_ROUND = 4;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Transport = 'stream' | 'append';

/** A reader of the message under `key` (a replayed start follows it live): when each character became visible. */
async function follow(world: World, key: string, body: StreamBody = {}) {
  const stream = await world.client.messages.stream(world.conversations[0]!, body, { idempotencyKey: key });
  const seen: { at: number; chars: number }[] = [];
  let onStarted!: () => void;
  const ready = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  const done = (async () => {
    let chars = 0;
    for await (const event of stream) {
      if (event.type === 'message.started') onStarted();
      const added =
        event.type === 'message.started'
          ? (event.message.content[0]?.text?.length ?? 0)
          : event.type === 'message.patch'
            ? event.patch.value.length
            : 0;
      if (added > 0) {
        chars += added;
        seen.push({ at: performance.now(), chars });
      }
    }
  })();
  const visibleAt = (chars: number) => {
    const at = seen.find((entry) => entry.chars >= chars)?.at;
    if (at === undefined) throw new Error(`the reader never saw character ${chars}`);
    return at;
  };
  return { done, ready, visibleAt };
}

interface Run {
  first: number;
  afterPause: number;
  latencies: number[];
  requests: number;
  chars: number;
}

/** The SDK's writer (`startReply` then `write`), the reader attached before the first token. */
async function writerRun(world: World, transport: Transport, key: string): Promise<Run> {
  const pieces = tokens(TOKENS);
  const before = world.mock.requests.length;
  const reply = await world.client.messages.startReply(
    world.conversations[0]!,
    {},
    { transport, idempotencyKey: key },
  );
  const readerEntry = world.mock.requests.length;
  const reader = await follow(world, key);
  await reader.ready;
  const writes: { at: number; chars: number }[] = [];
  let chars = 0;
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) await sleep(i === PAUSE_AT ? PAUSE_MS : PACE_MS);
    chars += piece.length;
    writes.push({ at: performance.now(), chars });
    await reply.write(piece);
  }
  const result = await reply.complete();
  await reader.done;
  if (result.text !== pieces.join('')) throw new Error(`${transport}: the reply holds other text`);
  const latencies = writes.map(({ at, chars: upTo }) => reader.visibleAt(upTo) - at);
  const requests = world.mock.requests.length - before - 1;
  if (world.mock.requests.length <= readerEntry) throw new Error('the reader made no request');
  return { first: latencies[0]!, afterPause: latencies[PAUSE_AT]!, latencies, requests, chars };
}

/** The pieces, one every PACE_MS (a model's pace), telling `first` when the first was handed over. */
async function* paced(pieces: readonly string[], first: (at: number) => void) {
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) await sleep(PACE_MS);
    else first(performance.now());
    yield piece;
  }
}

/**
 * `messages.reply()` (what `ctx.reply` calls): the message is made at the first chunk, so the
 * first token's time includes the start. The reader attaches once the mock reports the message
 * created; when the token is already applied it is in the reader's `message.started`, so this
 * figure is an upper bound (it holds the reader's own attach when that is the slower of the two).
 */
async function pipeRun(world: World, transport: Transport, key: string): Promise<number> {
  const pieces = tokens(TOKENS / 4);
  let firstAt = 0;
  const created = followWhenCreated(world, key);
  const source = paced(pieces, (at) => {
    firstAt = at;
  });
  await world.client.messages.reply(world.conversations[0]!, source, { transport, idempotencyKey: key });
  const follower = await created.reader();
  await follower.done;
  return follower.visibleAt(pieces[0]!.length) - firstAt;
}

/**
 * `ctx.reply` in a bot's handler, the delivery made by the mock: from the model's first chunk to the
 * reader seeing it, timed and read as in pipeRun (the reader replays the start under the key the
 * bot's client sent, taken from its request). The typing indicator runs as in any bot.
 */
async function botRun(world: World, bot: BotOf, transport: Transport): Promise<number> {
  const pieces = tokens(TOKENS / 4);
  let firstAt = 0;
  if (transport === 'append') {
    world.mock.faults.inject({
      method: 'POST',
      path: '/v1/conversations/*/messages',
      fault: 'refuse_streamed_body',
    });
  }
  bot.source = () =>
    paced(pieces, (at) => {
      firstAt = at;
    });
  let reader: ReturnType<typeof follow> | undefined;
  const { user_id } = bot;
  const { message } = world.mock.postUserMessage(world.conversations[0]!, { user_id, text: 'hi' });
  const unsubscribe = world.mock.events.subscribe((event) => {
    if (event.type === 'message.created' && event.message.sender.id === world.agentId) {
      reader ??= follow(world, bot.lastKey!, { replyToMessageId: message.id });
    }
  });
  await world.mock.idle();
  await bot.bot.idle();
  unsubscribe();
  if (bot.failure !== undefined) throw bot.failure;
  if (reader === undefined) throw new Error('the bot made no reply');
  const follower = await reader;
  await follower.done;
  return follower.visibleAt(pieces[0]!.length) - firstAt;
}

interface BotOf {
  bot: Bot;
  user_id: string;
  source: () => AsyncIterable<string>;
  lastKey: string | undefined;
  failure: unknown;
}

/** A bot on the world's mock whose handler replies with `source()`; its client's start keys are noted. */
function botOf(world: World, route: (deliver: (request: Request) => Promise<Response>) => void): BotOf {
  const state = { source: () => paced([], () => {}), lastKey: undefined, failure: undefined } as Omit<
    BotOf,
    'bot' | 'user_id'
  >;
  const bot = createBot({
    apiKey: world.apiKey,
    baseUrl: world.baseUrl,
    webhookSecret: world.webhookSecret,
    fetch: (input, init) => {
      const request = input instanceof Request ? input : undefined;
      const url = String(request?.url ?? input);
      const headers = new Headers(request?.headers ?? init?.headers);
      if (url.includes('stream=true')) state.lastKey = headers.get('idempotency-key') ?? undefined;
      return fetch(input, init);
    },
  });
  bot.onError((error) => {
    state.failure = error;
  });
  bot.on('message.received', async (ctx) => {
    await ctx.reply(state.source());
  });
  route((request) => bot.fetch(request));
  return Object.assign(state, { bot, user_id: world.userIds[0]! });
}

/** The requests of a reply of 1,000 pieces written back to back (the request-count goal's case). */
async function backToBackRequests(world: World, transport: Transport, key: string) {
  const pieces = tokens();
  const before = world.mock.requests.length;
  const reply = await world.client.messages.startReply(
    world.conversations[0]!,
    {},
    { transport, idempotencyKey: key },
  );
  for (const piece of pieces) await reply.write(piece);
  const result = await reply.complete();
  if (result.text !== pieces.join('')) throw new Error(`${transport}: the reply holds other text`);
  return { requests: world.mock.requests.length - before, chars: result.text.length };
}

/** Attaches a reader once the mock reports a message created in the conversation (before its start is answered). */
function followWhenCreated(world: World, key: string) {
  let reader: ReturnType<typeof follow> | undefined;
  const unsubscribe = world.mock.events.subscribe((event) => {
    if (event.type === 'message.created' && event.conversation_id === world.conversations[0]) {
      reader ??= follow(world, key);
    }
  });
  return {
    reader: async () => {
      unsubscribe();
      if (reader === undefined) throw new Error('no message was created');
      return reader;
    },
  };
}

/**
 * The floor, without the SDK: a raw streamed start, then one raw NDJSON patch line (stream) or one
 * raw append call (append) once `message.started` is read. `line`: timed from the patch, the reader
 * already attached; `start`: timed from before the start, the reader attached as in pipeRun.
 */
async function floorRun(
  world: World,
  transport: Transport,
  key: string,
  from: 'line' | 'start',
): Promise<number> {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
  });
  const line = (value: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
  const headers = { authorization: `Bearer ${world.apiKey}`, 'idempotency-key': key };
  const created = from === 'start' ? followWhenCreated(world, key) : undefined;
  const startAt = performance.now();
  line({ content: [], schema: AGENT_SEND_SCHEMA, stream: true });
  const url = `${world.baseUrl}/v1/conversations/${world.conversations[0]}/messages?stream=true`;
  const response = await fetch(url, {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { ...headers, 'content-type': 'application/x-ndjson', accept: 'text/event-stream' },
  } as RequestInit);
  const answer = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!text.includes('\n\n')) text += (await answer.read()).value ?? '';
  const { message } = JSON.parse(/data: (.*)/.exec(text)![1]!) as {
    message: { id: string; content: { id: string }[] };
  };
  const blockId = message.content[0]!.id;
  const reader = created === undefined ? await follow(world, key) : undefined;
  await reader?.ready;
  const lineAt = performance.now();
  if (transport === 'stream') {
    line({ type: 'message.patch', patch: { op: 'appendText', blockId, path: '/text', value: 'Hi' } });
  } else {
    const append = await fetch(`${world.baseUrl}/v1/messages/${message.id}/blocks/${blockId}/append`, {
      method: 'POST',
      body: JSON.stringify({ path: '/text', value: 'Hi' }),
      headers: { ...headers, 'content-type': 'application/json' },
    });
    await append.text();
  }
  line({ type: 'message.completed', fallbackText: 'Hi' });
  controller.close();
  while (!(await answer.read()).done);
  const follower = reader ?? (await created!.reader());
  await follower.done;
  return follower.visibleAt(2) - (from === 'line' ? lineAt : startAt);
}

/** Both transports: the SDK's writer, messages.reply, and the floors, each against a `messages.stream()` reader. */
export async function measureFirstToken(): Promise<Outcome> {
  let deliver: (request: Request) => Promise<Response> = async () => new Response(null, { status: 204 });
  const world = await startWorld({ mock: { fetch: (request) => deliver(request) } });
  const bot = botOf(world, (to) => {
    deliver = to;
  });
  try {
    let runs = 0;
    const key = () => `bench-first-${process.pid}-${++runs}`;
    // One of each first, unmeasured: module loading and JIT are not what a reply costs.
    for (const transport of ['stream', 'append'] as const) {
      await writerRun(world, transport, key());
      await pipeRun(world, transport, key());
      await floorRun(world, transport, key(), 'line');
      await floorRun(world, transport, key(), 'start');
      await botRun(world, bot, transport);
    }
    const rows: Row[] = [];
    const lines: string[][] = [];
    for (const transport of ['stream', 'append'] as const) {
      const writes: Run[] = [];
      const pipes: number[] = [];
      const bots: number[] = [];
      const floors: number[] = [];
      const startFloors: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        progress(`first token (${transport}): round ${round + 1}`);
        writes.push(await writerRun(world, transport, key()));
        pipes.push(await pipeRun(world, transport, key()));
        bots.push(await botRun(world, bot, transport));
        for (let i = 0; i < FLOORS_PER_ROUND; i++) {
          floors.push(await floorRun(world, transport, key(), 'line'));
          startFloors.push(await floorRun(world, transport, key(), 'start'));
        }
      }
      const burst = await backToBackRequests(world, transport, key());
      const first = median(writes.map((run) => run.first));
      const afterPause = median(writes.map((run) => run.afterPause));
      const p50 = median(writes.map((run) => median(run.latencies)));
      const p95 = median(writes.map((run) => percentile(run.latencies, 95)));
      const pipe = median(pipes);
      const ctxReply = median(bots);
      const floor = median(floors);
      const startFloor = median(startFloors);
      const paced = Math.max(...writes.map((run) => run.requests));
      const budget = transport === 'stream' ? 1 : Math.ceil(burst.chars / 256) + 2;
      const goal = transport === 'stream' ? '1' : `<= ${budget}`;
      lines.push([
        transport,
        fmt(first, 2),
        fmt(afterPause, 2),
        fmt(floor, 2),
        fmt(pipe, 2),
        fmt(ctxReply, 2),
        fmt(startFloor, 2),
        fmt(p50, 1),
        fmt(p95, 1),
        `${burst.requests} (goal ${goal}); paced: ${paced}`,
      ]);
      const worst = Math.max(first, afterPause);
      rows.push({
        measurement: `3b. first token written -> reader, ${transport}`,
        result:
          `first ${fmt(first, 2)} ms, after a pause ${fmt(afterPause, 2)} ms (raw line ${fmt(floor, 2)} ms); ` +
          `per token p50 ${fmt(p50, 1)} / p95 ${fmt(p95, 1)} ms; messages.reply from the first chunk, start included, ` +
          `${fmt(pipe, 2)} ms, ctx.reply ${fmt(ctxReply, 2)} ms (raw start + line ${fmt(startFloor, 2)} ms); ${burst.requests} requests for ` +
          `${fmt(burst.chars)} chars back to back`,
        goal: `<= ${GOAL_MS} ms; ${transport === 'stream' ? '1 request' : `<= ceil(chars/256)+2 = ${budget} requests`}`,
        status: worst <= GOAL_MS && burst.requests <= budget ? 'met' : 'NOT MET',
      });
    }
    const details = [
      `A reply of ${TOKENS} token-like pieces written one every ${PACE_MS} ms (a fast model), with a ${PAUSE_MS} ms ` +
        `pause before piece ${PAUSE_AT + 1} (a tool call), through the loopback door, the mock in the same process; ` +
        'a reader follows the message with `messages.stream()` (a replayed start). Latency: from calling ' +
        `\`write()\` to the reader seeing the character, median of ${ROUNDS} replies; per token: p50 and p95 ` +
        'over every piece of a reply (the coalescing defaults, 256 characters or 100 ms, hold the pieces after ' +
        'the first). Floor (raw line): after a raw streamed start, one raw NDJSON patch line (stream) or one ' +
        'raw append call (append), to the same reader. `messages.reply` (what `ctx.reply` calls): from the ' +
        "source's first chunk, which is when the message is made, to the reader seeing it; the reader attaches " +
        'when the mock reports the message created, so this is an upper bound; its floor is a raw start and ' +
        "a raw line timed the same way. Requests: the writer's (the reader's left out), for 1,000 pieces " +
        'written back to back, and for the paced reply (where the 100 ms timer sends, by design).',
      '',
      markdownTable(
        [
          'Transport',
          'First token ms',
          'After a pause ms',
          'Raw line ms',
          'messages.reply first chunk ms',
          'ctx.reply first chunk ms',
          'Raw start + line ms',
          'Per token p50 ms',
          'p95 ms',
          'Requests',
        ],
        lines,
      ),
    ];
    return { rows, details };
  } finally {
    await world.close();
  }
}

runAsChild(import.meta.url, measureFirstToken);
