// The webhook receivers of measurement 10, in one process (bench/lib/server-child.ts): the SDK's bot
// under toNodeHandler, grammY's webhookCallback on node:http, and bare node:http with standardwebhooks.
// Each has one handler that does nothing, so only the intake is measured. The floor is the least a
// Standard Webhooks receiver must do on node:http, written by hand: standardwebhooks signs with a
// JavaScript HMAC, so its receiver measures that library more than the work itself. The SDK is the built
// package when BENCH_INTAKE_DIST names its folder (what users run: no tsx helpers around every
// function), else the source under tsx.
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bot, webhookCallback } from 'grammy';
import { Webhook } from 'standardwebhooks';
import { serveCommands } from './server-child.js';

const dist = process.env.BENCH_INTAKE_DIST;
const fromDist = (file: string) => import(pathToFileURL(join(dist!, file)).href);
const { createBot } = (
  dist ? await fromDist('index.js') : await import('../../src/index.js')
) as typeof import('../../src/index.js');
const { toNodeHandler } = (
  dist ? await fromDist('node.js') : await import('../../src/node.js')
) as typeof import('../../src/node.js');

/** What the client needs to sign and address its deliveries. */
export interface IntakeInfo {
  ports: { sdk: number; sdkConcurrent: number; grammy: number; standardwebhooks: number; floor: number };
  webhookSecret: string;
  telegramSecret: string;
}

const webhookSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const telegramSecret = 'bench-secret-token';

const listen = (listener: RequestListener) =>
  new Promise<number>((resolve) => {
    const server = createServer(listener);
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

let handled = 0;
// The default ('queue': one handler at a time per conversation, in order) and 'concurrent' (no lanes),
// so the lanes' share of the intake shows.
const bots = (['queue', 'concurrent'] as const).map((concurrency) => {
  const bot = createBot({
    apiKey: 'ams_sk_bench',
    webhookSecret,
    baseUrl: 'http://127.0.0.1:9',
    concurrency,
  });
  bot.on('message.received', () => {
    handled += 1;
  });
  return bot;
});

const telegram = new Bot('1:bench', {
  botInfo: {
    id: 1,
    is_bot: true,
    first_name: 'Bench',
    username: 'bench_bot',
    can_join_groups: false,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  } as never,
});
telegram.on('message', () => {
  handled += 1;
});

const standard = new Webhook(webhookSecret);
const floorKey = createSecretKey(Buffer.from(webhookSecret.slice('whsec_'.length), 'base64'));

/** The floor: read the body, check the clock, HMAC with node:crypto, compare in constant time, JSON.parse, answer. */
const floor: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const id = String(req.headers['webhook-id']);
    const timestamp = String(req.headers['webhook-timestamp']);
    const expected = Buffer.from(
      createHmac('sha256', floorKey).update(`${id}.${timestamp}.`).update(body).digest('base64'),
    );
    const signed = String(req.headers['webhook-signature'])
      .split(' ')
      .some((token) => {
        const given = Buffer.from(token.slice('v1,'.length));
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
    if (!signed || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) {
      res.writeHead(401).end();
      return;
    }
    JSON.parse(body.toString('utf8'));
    handled += 1;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  });
};

const ports = {
  sdk: await listen(toNodeHandler(bots[0]!)),
  sdkConcurrent: await listen(toNodeHandler(bots[1]!)),
  grammy: await listen(webhookCallback(telegram, 'http', { secretToken: telegramSecret })),
  standardwebhooks: await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        standard.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        handled += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      } catch {
        res.writeHead(401).end();
      }
    });
  }),
  floor: await listen(floor),
};
// A scavenge of the young generation (node --expose-gc), ending each receiver's turn inside its own
// CPU window: every turn then starts with an empty young generation and pays for the garbage it made
// and the objects it keeps, not for what the receiver before it left (measurement 10's turns are
// short enough that one scavenge more or less moved a ratio by a tenth).
const gcYoung = () => {
  (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc?.({ type: 'minor' });
  return true;
};
serveCommands({ ports, webhookSecret, telegramSecret } satisfies IntakeInfo, {
  handled: () => handled,
  'gc-young': gcYoung,
});
