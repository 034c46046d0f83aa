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
    AuthenticationError: 'an error class (401)',
    BadRequestError: 'an error class (400)',
    ConflictError: 'an error class (409)',
    GoneError: 'an error class (410)',
    InternalServerError: 'an error class (5xx)',
    PermissionDeniedError: 'an error class (403)',
    UnprocessableEntityError: 'an error class (422)',
    InvalidResponseError: 'an error class (an answer that breaks the wire shape)',
    RequestAbortedError: 'an error class (a call aborted by its signal)',
    ModelStreamError: 'an error class (a model stream that failed, from toTextStream and ctx.reply)',
    ReplyMismatchError: 'an error class (a reply key already used for other text)',
    SessionConflictError: 'an error class (a session save that lost its compare-and-set)',
    MessageGivenUpError:
      'an error class (a message given up after maxAttempts failed runs, passed to onError)',
    StoreUnavailableError: 'an error class (a bot store that cannot reach its backend)',
    composeAdmit: "a custom store's admit built from its primitives (BotStore, docs/bot.md)",
    composeSettle: "a custom store's settle built from its primitives (BotStore, docs/bot.md)",
    schemas: 'the wire shapes as zod schemas, by the names of their types (checked below)',
  },
  'agent-messaging/testing': {
    generateWebhookSecret:
      'a secret in the service format for tests that sign deliveries (examples/bot.test.ts)',
    mockSchemas: "the mock's control and feed wire shapes as zod schemas, by the names of their types",
  },
  'agent-messaging/node': {
    toNodeFetchHandler:
      'serves a fetch handler that is not a bot (a Hono app, the Chat SDK webhook) on node:http',
  },
  'agent-messaging/redis': {
    StoreUnavailableError: 'an error class, the one a Redis store throws, importable beside it',
  },
};

/** Namespaces of zod schemas: each member is a schema named after a type its entry exports. */
const SCHEMA_NAMESPACES: Record<string, string> = {
  'agent-messaging': 'schemas',
  'agent-messaging/testing': 'mockSchemas',
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

  it('names no type that no entry exports (every type a declaration uses can be imported)', () => {
    const unexported = [...api].flatMap(([entry, { unexported }]) =>
      unexported.map((n) => `${entry.specifier}: ${n}`),
    );
    expect(unexported).toEqual([]);
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

describe('the schema namespaces', () => {
  it('hold only zod schemas, each named after a wire type its entry exports', async () => {
    const problems: string[] = [];
    for (const [specifier, namespace] of Object.entries(SCHEMA_NAMESPACES)) {
      const entry = API_ENTRIES.find((e) => e.specifier === specifier)!;
      const { exports } = api.get(entry)!;
      const types = new Set(exports.filter((e) => !e.value && !e.name.includes('.')).map((e) => e.name));
      const module: Record<string, Record<string, unknown>> = await import(/* @vite-ignore */ specifier);
      const members = Object.entries(module[namespace] ?? {});
      expect(members.length, `${specifier} ${namespace}`).toBeGreaterThan(0);
      for (const [name, value] of members) {
        const isSchema = typeof value === 'object' && value !== null && '_zod' in value;
        if (!isSchema) problems.push(`${namespace}.${name}: not a zod schema`);
        if (!types.has(name)) problems.push(`${namespace}.${name}: ${specifier} exports no type ${name}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
