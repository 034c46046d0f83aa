// Measurement 5 and the CI budget: min+gzip of `import { AgentClient } from 'agent-messaging'`,
// bundled by rolldown with code splitting (as Vite bundles an app) from a fresh build of the package,
// counting the chunks loaded up front. Two numbers: issue 7's goal (25 KiB), which the
// chosen dependencies alone nearly fill (BENCHMARKS.md), and the CI budget, a ceiling just above
// today's size so that growth fails CI. Exits 1 over the CI budget.
// `node bench/bundle-size.mjs` (the `size` script); `--outcome` prints a line for bench/run.ts.
import { gzipSync } from 'node:zlib';
import { transform } from 'esbuild';
import { rolldown } from 'rolldown';
import { register } from 'tsx/esm/api';

/** Issue 7's goal for the main entry, min+gzip. */
export const BUDGET_BYTES = 25 * 1024;
/** What CI enforces: today's size plus a little headroom, so any real growth fails the run. */
export const CI_BUDGET_BYTES = 36 * 1024;

const MAIN = "export { AgentClient } from 'agent-messaging';";
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Where the bytes of a bundle input come from: a package name, or the SDK itself. */
function packageOf(path) {
  const at = path.lastIndexOf('node_modules/');
  if (at === -1) return 'agent-messaging (the SDK)';
  const [scope, name] = path.slice(at + 'node_modules/'.length).split('/');
  return scope.startsWith('@') ? `${scope}/${name}` : scope;
}

/**
 * Bundles `contents` as an app's bundler does (browser or worker): rolldown, Vite's bundler, with code
 * splitting as Vite, webpack and Rollup apply it by default, so what the SDK loads through a dynamic
 * `import()` (messages.stream, startReply, reply: the streaming machinery and src/llm) goes to chunks
 * fetched on first use, and only the chunks the import loads up front are counted (firstLoad). Not
 * esbuild: its splitting follows every re-export of a module some chunk uses, so it loads the
 * streaming chunks up front even where nothing calls them. Each chunk is minified by esbuild, as
 * before. `external` leaves packages out.
 */
async function bundle(contents, entry, external = []) {
  const main = {
    name: 'main',
    resolveId: (id) => (id === 'main' ? '\0main' : undefined),
    load: (id) => (id === '\0main' ? contents : undefined),
  };
  const input = await rolldown({
    input: 'main',
    cwd: process.cwd(),
    platform: 'browser',
    resolve: { alias: { 'agent-messaging': entry } },
    external: (id) => external.some((name) => id === name || id.startsWith(`${name.replace('/*', '')}/`)),
    plugins: [main],
    logLevel: 'silent',
  });
  const { output } = await input.generate({ format: 'esm' });
  await input.close();
  const chunks = output.filter((chunk) => chunk.type === 'chunk');
  for (const chunk of chunks) {
    chunk.minified = Buffer.from((await transform(chunk.code, { minify: true, target: 'es2022' })).code);
  }
  return chunks;
}

/**
 * What the import loads before any code runs: the entry chunk and the chunks it imports statically,
 * each minified and gzipped on its own (as served); chunks reached only by `import()` are `lazy`.
 */
function firstLoad(chunks) {
  const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
  const eager = new Set();
  const visit = (chunk) => {
    if (eager.has(chunk)) return;
    eager.add(chunk);
    for (const name of chunk.imports) if (byName.has(name)) visit(byName.get(name));
  };
  visit(chunks.find((chunk) => chunk.isEntry));
  const lazy = chunks.filter((chunk) => !eager.has(chunk));
  const gzip = (list) => list.reduce((total, chunk) => total + gzipSync(chunk.minified).byteLength, 0);
  return {
    eager: [...eager],
    minBytes: [...eager].reduce((total, chunk) => total + chunk.minified.byteLength, 0),
    gzipBytes: gzip([...eager]),
    lazyGzipBytes: gzip(lazy),
    lazyChunks: lazy.length,
  };
}

const gzipOf = async (contents, entry, external) =>
  firstLoad(await bundle(contents, entry, external)).gzipBytes;

/**
 * Where the bytes come from: the same import without its dependencies, and those on their own. The
 * package bundles ky, zod and eventsource-parser into its own files, so these are bundled from the
 * source (`entry` is src/index.ts), where each dependency can still be left out.
 */
async function breakdown(entry) {
  const zodCheck = (from) =>
    `import * as z from '${from}'; export const check = (v) => z.object({ a: z.string() }).safeParse(v);`;
  return [
    ['the same import, zod left out', await gzipOf(MAIN, entry, ['zod', 'zod/*'])],
    ['the same import, zod and ky left out', await gzipOf(MAIN, entry, ['zod', 'zod/*', 'ky'])],
    ['ky alone', await gzipOf("export { default } from 'ky';", entry)],
    ['zod (classic): one object schema and safeParse', await gzipOf(zodCheck('zod'), entry)],
    ['zod/mini: the same schema', await gzipOf(zodCheck('zod/mini'), entry)],
  ];
}

/** Builds the package, bundles the import, and answers its sizes, by package and broken down. */
export async function measureBundle() {
  const unregister = register();
  const { buildPackage } = await import('./lib/build.ts');
  const entry = await buildPackage();
  await unregister();
  const loaded = firstLoad(await bundle(MAIN, entry));
  const source = new URL('../src/index.ts', import.meta.url).pathname;
  const fromSource = await bundle(MAIN, source);
  const byPackage = new Map();
  for (const chunk of firstLoad(fromSource).eager) {
    for (const [input, { renderedLength }] of Object.entries(chunk.modules)) {
      byPackage.set(packageOf(input), (byPackage.get(packageOf(input)) ?? 0) + renderedLength);
    }
  }
  const packages = [...byPackage].sort((a, b) => b[1] - a[1]);
  const parts = await breakdown(source);
  return { ...loaded, packages, parts };
}

const size = await measureBundle();
const met = size.gzipBytes <= BUDGET_BYTES;
const shares = size.packages.map(([name, bytes]) => `${name} ${kib(bytes)}`).join(', ');
if (process.argv.includes('--outcome')) {
  const outcome = {
    rows: [
      {
        measurement: '5. bundle, `import { AgentClient }`',
        result: `${kib(size.gzipBytes)} min+gzip (${kib(size.minBytes)} minified)`,
        goal: `<= ${kib(BUDGET_BYTES)}`,
        status: met ? 'met' : 'NOT MET',
      },
    ],
    details: [
      `rolldown (bundle, code splitting, ESM, browser platform) of \`${MAIN}\` over a fresh build of the ` +
        'package (tsup.config.ts), each chunk minified by esbuild (es2022) and gzipped at the default level, ' +
        'summed over the chunks the import loads before any code runs. Loaded on first use ' +
        `(messages.stream, startReply, reply): ${kib(size.lazyGzipBytes)} min+gzip in ${size.lazyChunks} chunks.`,
      '',
      `Bytes by package before minification, in the chunks loaded up front (the same import bundled from the source): ${shares}.`,
      '',
      '| Where the bytes come from | min+gzip |',
      '| --- | --- |',
      ...size.parts.map(([name, bytes]) => `| ${name} | ${kib(bytes)} |`),
    ],
  };
  process.stdout.write(`@@outcome ${JSON.stringify(outcome)}\n`);
} else {
  console.log(
    `import { AgentClient } from 'agent-messaging': ${kib(size.gzipBytes)} min+gzip, ${kib(size.minBytes)} minified`,
  );
  console.log(
    `loaded on first use (streaming, src/llm): ${kib(size.lazyGzipBytes)} min+gzip in ${size.lazyChunks} chunks`,
  );
  console.log(`goal ${kib(BUDGET_BYTES)}: ${met ? 'met' : 'not met (see BENCHMARKS.md)'}`);
  console.log(`CI budget ${kib(CI_BUDGET_BYTES)}: ${size.gzipBytes <= CI_BUDGET_BYTES ? 'within' : 'OVER'}`);
  console.log(`bytes by package (before minification, loaded up front): ${shares}`);
  for (const [name, bytes] of size.parts) console.log(`  ${name}: ${kib(bytes)} min+gzip`);
}
process.exitCode = size.gzipBytes <= CI_BUDGET_BYTES ? 0 : 1;
