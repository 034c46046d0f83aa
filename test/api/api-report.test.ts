// The public surface, pinned: the API report (api/*.api.md) regenerated from the sources must match
// the checked-in one name for name, every name API.md imports must be exported by its entry, and
// every runtime value an entry exports must be named in API.md or allowed below with a reason.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  API_ENTRIES,
  type ApiEntry,
  type EntryApi,
  ROOT,
  readApi,
  renderReport,
  sectionsOf,
} from '../../scripts/api-report.js';

/**
 * Runtime values exported beyond API.md's names, by entry, each with why a user needs it. API.md is
 * the contract (api/API.md is its copy); an export outside both is a name nobody promised.
 */
const ALLOWED: Record<string, Record<string, string>> = {
  'agent-messaging': {
    ApiPromise: 'the class of every call, so `.withResponse()` can be typed and checked',
    AuthenticationError: 'an ApiError subclass users catch (401)',
    BadRequestError: 'an ApiError subclass users catch (400)',
    ConflictError: 'an ApiError subclass users catch (409)',
    GoneError: 'an ApiError subclass users catch (410)',
    InternalServerError: 'an ApiError subclass users catch (5xx)',
    PermissionDeniedError: 'an ApiError subclass users catch (403)',
    UnprocessableEntityError: 'an ApiError subclass users catch (422)',
    InvalidResponseError: 'an AgentMessagingError users catch (an answer that breaks the wire shape)',
    RequestAbortedError: 'an AgentMessagingError users catch (a call aborted by its signal)',
    ModelStreamError: 'thrown by toTextStream and ctx.reply on a model stream that failed',
    ReplyMismatchError: 'thrown by a reply whose idempotency key was already used for other text',
    SessionConflictError: 'thrown when a session save lost its compare-and-set',
    StoreUnavailableError: 'thrown by a bot store that cannot reach its backend (BotStore implementers)',
    MessageStream: 'the class client.messages.stream returns',
    ReplyWriter: 'the class client.messages.startReply returns',
    schemas: 'the wire shapes as zod schemas, by name (validating a payload a user got elsewhere)',
    DEFAULT_ACK_TIMEOUT_MS: 'the default of BotOptions.ackTimeoutMs',
    DEFAULT_COALESCE: 'the default of the coalescing thresholds API.md describes (256 characters, 100 ms)',
    DEFAULT_HISTORY_LIMIT: 'the default of ctx.history({ limit })',
    DEFAULT_IDLE_TIMEOUT_MS: 'the default of MessageStreamOptions.idleTimeoutMs',
    DEFAULT_INTERRUPTED_NOTE: 'the default of ReplyOptions.interruptedNote',
    DEFAULT_MAX_RETRIES: 'the default of maxRetries API.md gives (2)',
    DEFAULT_TIMEOUT_MS: 'the default of timeoutMs',
    DEFAULT_TOLERANCE_SEC: 'the default of verifyWebhook toleranceSec',
    DEDUPE_RETENTION_MS: 'deprecated; issue 22 removes it with the dedupe option',
    createMemoryDedupeStore: 'deprecated; issue 22 removes it with the dedupe option',
    storeLedger: 'a reply ledger over a BotStore, for replies made outside a bot (ReplyOptions.ledger)',
    supportsStreamedBodies: 'whether the runtime can send a streamed request body (transport: "stream")',
  },
  'agent-messaging/testing': {
    generateWebhookSecret: 'a secret in the service format, for tests that sign deliveries',
    mockSchemas: "the mock's control-API wire shapes as zod schemas, by name",
  },
  'agent-messaging/node': {
    toNodeFetchHandler:
      'serves a fetch handler that is not a bot (a Hono app, the Chat SDK webhook) on node:http',
  },
  'agent-messaging/redis': {
    DEFAULT_REDIS_PREFIX: 'the default of RedisStoreOptions.prefix',
    DEFAULT_REDIS_TIMEOUT_MS: 'the default of RedisStoreOptions.timeoutMs',
    StoreUnavailableError: 'the error a Redis store throws, also importable beside it',
    fromIoredis: 'the ioredis client as a RedisStoreClient (README)',
  },
  'agent-messaging/chat-sdk': {
    AgentMessagingAdapter: 'the class createAgentMessagingAdapter returns (Chat SDK adapters are classes)',
    decodeThreadId: "Chat SDK's thread id for a conversation, for code that posts outside a handler",
    encodeThreadId: "Chat SDK's thread id for a conversation, for code that posts outside a handler",
  },
};

const apiMd = readFileSync(join(ROOT, 'api/API.md'), 'utf8');

/** `import { a, type B } from 'agent-messaging...'` in API.md's ```ts blocks: entry -> names. */
function apiMdImports(): Map<string, string[]> {
  const imports = new Map<string, string[]>();
  for (const [, code = ''] of apiMd.matchAll(/```ts\n([\s\S]*?)```/g)) {
    for (const [, list = '', from = ''] of code.matchAll(
      /import\s*\{([^}]*)\}\s*from\s*'(agent-messaging[^']*)'/g,
    )) {
      const names = list
        .split(',')
        .map((name) =>
          name
            .trim()
            .replace(/^type\s+/, '')
            .replace(/\s+as\s+.*$/, ''),
        )
        .filter(Boolean);
      imports.set(from, [...(imports.get(from) ?? []), ...names]);
    }
  }
  return imports;
}

/** A line diff of two texts (longest common subsequence), `-` for the checked-in side, `+` for the new. */
function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  const common: number[][] = Array.from({ length: a.length + 1 }, () =>
    new Array<number>(b.length + 1).fill(0),
  );
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i]![j] =
        a[i] === b[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < a.length && (j === b.length || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      out.push(`    - ${a[i++]}`);
    } else {
      out.push(`    + ${b[j++]}`);
    }
  }
  return out.join('\n');
}

/** What changed between the checked-in report and the sources, by name; empty when nothing did. */
function reportChanges(entry: ApiEntry, checkedIn: string, fresh: string): string[] {
  const before = sectionsOf(checkedIn);
  const after = sectionsOf(fresh);
  const changes: string[] = [];
  for (const [name, text] of after) {
    const label = name === '' ? 'the header' : name;
    if (!before.has(name)) changes.push(`  + ${label}: exported now, not in ${entry.report}`);
    else if (before.get(name) !== text)
      changes.push(`  ~ ${label} changed:\n${lineDiff(before.get(name)!, text)}`);
  }
  for (const name of before.keys()) {
    if (!after.has(name)) changes.push(`  - ${name}: in ${entry.report}, no longer exported`);
  }
  return changes;
}

let api: Map<ApiEntry, EntryApi>;
beforeAll(() => {
  api = readApi();
}, 180_000);

describe('the API report', () => {
  it('matches the sources, name for name (else run `npm run api-report` and commit api/)', () => {
    const problems: string[] = [];
    for (const [entry, entryApi] of api) {
      let checkedIn = '';
      try {
        checkedIn = readFileSync(join(ROOT, entry.report), 'utf8');
      } catch {
        problems.push(`${entry.report} is missing`);
        continue;
      }
      const fresh = renderReport(entry, entryApi);
      if (checkedIn === fresh) continue;
      const changes = reportChanges(entry, checkedIn, fresh);
      problems.push(`${entry.specifier} (${entry.report}):\n${changes.join('\n') || '  (layout only)'}`);
    }
    expect(problems.join('\n\n'), 'the exports differ from the API report').toBe('');
  });

  it('marks as runtime values exactly what each entry exports at run time', async () => {
    for (const [entry, { exports }] of api) {
      const module: Record<string, unknown> = await import(/* @vite-ignore */ entry.specifier);
      const reported = exports.filter((e) => e.value && !e.name.includes('.')).map((e) => e.name);
      expect(Object.keys(module).sort(), entry.specifier).toEqual(reported);
    }
  });
});

describe('API.md and the exports', () => {
  it('export every name API.md imports, from the entry it imports it from', () => {
    const imports = apiMdImports();
    expect(imports.size).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const [specifier, names] of imports) {
      const entry = API_ENTRIES.find((e) => e.specifier === specifier);
      if (!entry) {
        missing.push(`${specifier}: not a package entry`);
        continue;
      }
      const exported = new Set(api.get(entry)!.exports.map((e) => e.name));
      for (const name of names) if (!exported.has(name)) missing.push(`${specifier}: ${name}`);
    }
    expect(missing, 'names API.md imports that the entry does not export').toEqual([]);
  });

  it('name every runtime value an entry exports, or allow it here with a reason', () => {
    const unnamed: string[] = [];
    const stale: string[] = [];
    for (const [entry, { exports }] of api) {
      const allowed = ALLOWED[entry.specifier] ?? {};
      const values = exports.filter((e) => e.value && !e.name.includes('.')).map((e) => e.name);
      for (const name of values) {
        if (!new RegExp(`\\b${name}\\b`).test(apiMd) && !(name in allowed))
          unnamed.push(`${entry.specifier}: ${name}`);
      }
      for (const name of Object.keys(allowed))
        if (!values.includes(name)) stale.push(`${entry.specifier}: ${name}`);
    }
    expect(unnamed, 'runtime values API.md never names (name them there or in ALLOWED)').toEqual([]);
    expect(stale, 'ALLOWED names no entry exports any more (remove them from ALLOWED)').toEqual([]);
  });
});
