// Measurement: the bot store on Redis against the memory store, through bot.fetch with the 'queue'
// policy. Deliveries per CPU-second of the bot's process (redis-server's own CPU not counted), the
// store commands one delivery sends to an idle conversation (each awaited in turn: one round trip each), and
// the time a lock hand-off adds between two queued messages of one conversation (the second
// delivery taken by a second instance on the same Redis, woken by the release), and the bytes Redis
// sends per message as one conversation's backlog grows from 1 to 100.
import { createClient } from 'redis';
import { type BotStore, createBot, createMemoryStore } from '../src/index.js';
import { createRedisStore, type RedisStoreClient } from '../src/redis/index.js';
import { startRedis } from '../test/store/redis-server.js';
import { progress, runAsChild } from './lib/child.js';
import { markdownTable, type Outcome } from './lib/report.js';
import { fmt, median, percentile } from './lib/stats.js';
import { startWorld, type World } from './lib/world.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 400);
const BACKLOGS = [1, 10, 100];
// A message text this long makes a delivery's body about 30 KB: the store's traffic is its bodies.
const BODY_CHARS = 30_000;
const HANDOFFS = Number(process.env.BENCH_HANDOFFS ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const silent = () => {};

/**
 * Signed `message.received` deliveries, captured from the mock (each its own event, one per message),
 * each text padded to `chars` characters.
 */
async function captureDeliveries(count: number, conversations: number, chars = 0) {
  const captured: Request[] = [];
  let capturing = false;
  const world = await startWorld({
    users: conversations,
    mock: {
      fetch: async (request) => {
        if (capturing) captured.push(request);
        return new Response(null, { status: 204 });
      },
    },
  });
  capturing = true;
  for (let i = 0; i < count; i++) {
    const c = i % conversations;
    const text = `m${i} `.padEnd(chars, 'x');
    world.mock.postUserMessage(world.conversations[c]!, { user_id: world.userIds[c]!, text });
  }
  await world.mock.idle();
  return { world, captured };
}

/** A client that counts the commands the store sends. */
function counting(client: RedisStoreClient) {
  const counter = { commands: 0 };
  const wrapped: RedisStoreClient = {
    get isOpen() {
      return client.isOpen;
    },
    sendCommand: (args, options) => {
      counter.commands++;
      return client.sendCommand(args, options);
    },
    duplicate: () => client.duplicate(),
  };
  return { wrapped, counter };
}

/** Deliveries per CPU-second through bot.fetch, one delivery at a time (an idle conversation: no contention). */
async function throughput(world: World, requests: Request[], store: BotStore, counter = { commands: 0 }) {
  const bot = createBot({
    apiKey: world.apiKey,
    webhookSecret: world.webhookSecret,
    baseUrl: world.baseUrl,
    store,
    logger: silent,
  });
  bot.on('message.received', () => {});
  const warm = requests.slice(0, 50);
  for (const request of warm) await bot.fetch(request.clone());
  const measured = requests.slice(50);
  const commandsBefore = counter.commands; // after the warm-up: each script's one-time EVAL is not counted
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const request of measured) {
    const response = await bot.fetch(request.clone());
    if (response.status !== 200) throw new Error(`bot.fetch answered ${response.status}`);
  }
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  return {
    commandsPerDelivery: (counter.commands - commandsBefore) / measured.length,
    perCpuSecond: measured.length / cpuSeconds,
    perSecond: measured.length / ((performance.now() - started) / 1000),
    count: measured.length,
  };
}

/** Milliseconds from the end of one handler to the start of the next queued one in its conversation. */
async function handoff(world: World, requests: Request[], stores: [BotStore, BotStore]) {
  const bots = stores.map((store) =>
    createBot({
      apiKey: world.apiKey,
      webhookSecret: world.webhookSecret,
      baseUrl: world.baseUrl,
      store,
      logger: silent,
    }),
  );
  const gaps: number[] = [];
  let endedAt = 0;
  let calls = 0;
  let gate: (() => void) | undefined;
  let second: ((at: number) => void) | undefined;
  for (const bot of bots) {
    bot.on('message.received', async () => {
      if (++calls === 2) return second?.(performance.now());
      await new Promise<void>((resolve) => {
        gate = resolve;
      });
      endedAt = performance.now();
    });
  }
  // Pairs of deliveries in one conversation: the first holds the lock, the second waits on the other bot.
  for (let i = 0; i + 1 < requests.length && gaps.length < HANDOFFS; i += 2) {
    calls = 0;
    gate = undefined;
    const started = new Promise<number>((resolve) => {
      second = resolve;
    });
    const first = bots[0]!.fetch(requests[i]!.clone());
    while (gate === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
    const waiting = bots[1]!.fetch(requests[i + 1]!.clone());
    await new Promise((resolve) => setTimeout(resolve, 20)); // the second is queued and listening
    (gate as () => void)();
    gaps.push((await started) - endedAt);
    await Promise.all([first, waiting, bots[0]!.idle(), bots[1]!.idle()]);
  }
  return gaps;
}

/** The bytes redis-server has sent its clients so far (INFO stats `total_net_output_bytes`). */
async function bytesSent(client: RedisStoreClient) {
  const info = String(await client.sendCommand(['INFO', 'stats']));
  return Number(/total_net_output_bytes:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

/**
 * Bytes Redis sends per message while one bot works through a backlog of `backlog` messages queued
 * behind a held conversation ('queue' policy, one conversation): from the holder's release of its
 * first message until every queued one was handled, divided by `backlog`. What two back-to-back
 * INFO calls cost is taken off.
 */
async function backlogBytes(
  world: World,
  requests: Request[],
  client: RedisStoreClient,
  prefix: string,
  backlog: number,
) {
  const bot = createBot({
    apiKey: world.apiKey,
    webhookSecret: world.webhookSecret,
    baseUrl: world.baseUrl,
    store: createRedisStore({ client, prefix }),
    logger: silent,
  });
  let gate: (() => void) | undefined;
  const opened = new Promise<void>((resolve) => {
    gate = resolve;
  });
  let held!: () => void;
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  let runs = 0;
  bot.on('message.received', async () => {
    if (++runs > 1) return;
    held();
    await opened;
  });
  const first = bot.fetch(requests[0]!.clone());
  await holding;
  const waiting = requests.slice(1, backlog + 1).map((request) => bot.fetch(request.clone()));
  const queue = `${prefix}q:queue:${world.conversations[0]}`;
  while (Number(await client.sendCommand(['ZCARD', queue])) < backlog + 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const probe = await bytesSent(client);
  const before = await bytesSent(client);
  const info = before - probe; // one INFO reply, counted again in `after`
  gate?.();
  const answers = await Promise.all([first, ...waiting]);
  await bot.idle();
  const after = await bytesSent(client);
  if (runs !== backlog + 1 || answers.some((response) => response.status !== 200)) {
    throw new Error(`backlog ${backlog}: ${runs} runs, answers ${answers.map((r) => r.status).join(',')}`);
  }
  return (after - before - info) / backlog;
}

async function measure(): Promise<Outcome> {
  const redis = await startRedis();
  const clients = [createClient({ url: redis.url }), createClient({ url: redis.url })];
  for (const client of clients) {
    client.on('error', silent);
    await client.connect();
  }
  try {
    progress('store-redis: capturing deliveries');
    const many = await captureDeliveries(DELIVERIES + 50, 20);
    const { wrapped, counter } = counting(clients[0]!);
    const prefix = `bench:${process.pid}:`;
    // Rounds interleaved (the order alternates), each on a fresh store; the ratio is taken per round.
    type Run = Awaited<ReturnType<typeof throughput>>;
    const runs: { memory: Run; redis: Run }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      progress(`store-redis: round ${round + 1}/${ROUNDS}`);
      const onMemory = () => throughput(many.world, many.captured, createMemoryStore());
      const onRedis = () =>
        throughput(
          many.world,
          many.captured,
          createRedisStore({ client: wrapped, prefix: `${prefix}r${round}:` }),
          counter,
        );
      if (round % 2 === 0) {
        const memory = await onMemory();
        runs.push({ memory, redis: await onRedis() });
      } else {
        const redis = await onRedis();
        runs.push({ memory: await onMemory(), redis });
      }
    }
    const middle = (pick: (run: { memory: Run; redis: Run }) => number) => median(runs.map(pick));
    const memory = {
      perCpuSecond: middle((r) => r.memory.perCpuSecond),
      perSecond: middle((r) => r.memory.perSecond),
    };
    const onRedis = {
      perCpuSecond: middle((r) => r.redis.perCpuSecond),
      perSecond: middle((r) => r.redis.perSecond),
      count: runs[0]!.redis.count,
      commandsPerDelivery: Math.max(...runs.map((r) => r.redis.commandsPerDelivery)),
    };
    const { commandsPerDelivery } = onRedis;

    progress('store-redis: lock hand-offs');
    const pairs = await captureDeliveries(HANDOFFS * 2, 1); // one conversation: every pair queues
    const redisGaps = await handoff(pairs.world, pairs.captured, [
      createRedisStore({ client: clients[0]!, prefix: `${prefix}h:` }),
      createRedisStore({ client: clients[1]!, prefix: `${prefix}h:` }),
    ]);
    const memoryPairs = await captureDeliveries(HANDOFFS * 2, 1);
    const shared = createMemoryStore();
    const memoryGaps = await handoff(memoryPairs.world, memoryPairs.captured, [shared, shared]);
    progress('store-redis: traffic per message against the backlog');
    const big = await captureDeliveries(Math.max(...BACKLOGS) + 1, 1, BODY_CHARS);
    const bodyBytes = new TextEncoder().encode(await big.captured[0]!.clone().text()).length;
    const traffic: number[] = [];
    for (const backlog of BACKLOGS) {
      traffic.push(
        await backlogBytes(big.world, big.captured, clients[0]!, `${prefix}b${backlog}:`, backlog),
      );
    }
    const flat = traffic.at(-1)! <= 1.5 * traffic[0]!;
    for (const world of [many.world, pairs.world, memoryPairs.world, big.world]) await world.close();

    const ratio = middle((r) => r.memory.perCpuSecond / r.redis.perCpuSecond);
    return {
      rows: [
        {
          measurement: 'bot.fetch deliveries per CPU-second, Redis store vs memory store',
          result: `${fmt(onRedis.perCpuSecond)} vs ${fmt(memory.perCpuSecond)} (memory ${fmt(ratio, 2)}x)`,
          goal: '',
          status: 'info',
        },
        {
          measurement: 'Redis store: commands (round trips) per delivery, idle conversation',
          result: fmt(commandsPerDelivery, 1),
          goal: '<= 2',
          status: commandsPerDelivery <= 2 ? 'met' : 'NOT MET',
        },
        {
          measurement: `Redis bytes sent per message, backlog ${BACKLOGS.join(' / ')} ('queue', ${fmt(bodyBytes / 1024, 1)} KiB bodies)`,
          result: traffic.map((bytes) => `${fmt(bytes / 1024, 1)} KiB`).join(' / '),
          goal: 'flat (backlog 100 at most 1.5x backlog 1)',
          status: flat ? 'met' : 'NOT MET',
        },
        {
          measurement: 'lock hand-off between two queued messages (median / p95)',
          result: `Redis ${fmt(median(redisGaps), 2)} / ${fmt(percentile(redisGaps, 95), 2)} ms; memory ${fmt(median(memoryGaps), 2)} / ${fmt(percentile(memoryGaps, 95), 2)} ms`,
          goal: '',
          status: 'info',
        },
      ],
      details: [
        `Median of ${ROUNDS} interleaved rounds of ${fmt(onRedis.count)} \`message.received\` deliveries (20 conversations, signed by the mock) into ` +
          "`bot.fetch` one at a time, 'queue' policy, a handler that does nothing: the runtime and its store " +
          "alone. CPU is the bot process's (`process.cpuUsage`); redis-server runs in its own process on the same machine and is not counted; the ratio is the median of the per-round ratios.",
        '',
        markdownTable(
          [
            'Store',
            'Deliveries per CPU-second',
            'Deliveries per second (wall)',
            'Store commands per delivery',
          ],
          [
            ['memory', fmt(memory.perCpuSecond), fmt(memory.perSecond), '-'],
            [
              'Redis (node-redis 5, loopback)',
              fmt(onRedis.perCpuSecond),
              fmt(onRedis.perSecond),
              fmt(commandsPerDelivery, 1),
            ],
          ],
        ),
        '',
        'Each store command of a delivery is awaited before the next, so commands per delivery is its round ' +
          'trips to Redis, counted after the warm-up (a script is sent in full once, on its first NOSCRIPT). ' +
          'A delivery to an idle conversation is two scripts: `admit` (claim + enqueue + lock + read) and ' +
          '`settle` (done mark + removal + release + publish), src/redis/scripts.ts; before them it ' +
          'was eight commands (claim, enqueue, lock, take, mark done, take again, release, publish).',
        '',
        `Traffic against the backlog: one bot ('queue' policy) holds one conversation while ${BACKLOGS.join(', ')} ` +
          `more deliveries of it (${fmt(bodyBytes / 1024, 1)} KiB signed bodies) are queued behind it; then its ` +
          "handler returns and the backlog is worked through (handlers that do nothing). Redis's INFO " +
          '`total_net_output_bytes` from that release until every delivery was answered, less what the ' +
          'INFO calls cost, divided by the backlog: what Redis sends per message, replies and published ' +
          'releases included. The holder reads only the head of the queue after each message; a read of ' +
          'the whole queue would send the square of the backlog.',
        '',
        `Lock hand-off: ${HANDOFFS} pairs of messages in one conversation; the first is held by bot A until ` +
          'released; the second was delivered to bot B (a second store instance on its own connection) and ' +
          'waits. Measured from the end of the first handler to the start of the second, whichever instance runs it.',
      ],
    };
  } finally {
    for (const client of clients) client.destroy();
    await redis.stop();
  }
}

runAsChild(import.meta.url, measure);
