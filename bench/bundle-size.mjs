// Measurement 5 and the CI budget: min+gzip of `import { AgentClient } from 'agent-messaging'`,
// bundled by rolldown with code splitting (as Vite bundles an app) from a fresh build of the package,
// counting the chunks loaded up front, and by esbuild with splitting (the same count). The SDK loads
// nothing with import(): what AgentClient reaches statically (its transport and ky, the schemas, the
// streaming reader and reply writer its messages resource uses) is what an app loads with it.
// Exits 1 over the budget with either bundler.
// `node bench/bundle-size.mjs` (the `size` script); `--outcome` prints a line for bench/run.ts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, transform } from 'esbuild';
import { rolldown } from 'rolldown';
import { register } from 'tsx/esm/api';

/** Issue 22's bound for the main entry, min+gzip, loaded up front, with rolldown and with esbuild. */
export const BUDGET_BYTES = 36 * 1024;

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
 * splitting as Vite, webpack and Rollup apply it by default; only the chunks the import loads up
 * front are counted (firstLoad). Each chunk is minified by esbuild. `external` leaves packages out.
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

/** The chunks the import loads before any code runs: the entry chunk and what it imports statically. */
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

/**
 * The same import bundled by esbuild with `splitting` (ESM, browser, minified), the chunks it imports
 * statically summed. The package is bundled as installed: its built files with `sideEffects: false`
 * beside them (buildPackage), as in node_modules.
 */
async function esbuildFirstLoad(entry) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-messaging-size-'));
  try {
    const main = join(dir, 'main.js');
    writeFileSync(main, MAIN);
    const result = await build({
      entryPoints: [main],
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      write: false,
      outdir: join(dir, 'out'),
      alias: { 'agent-messaging': entry },
      nodePaths: [new URL('../node_modules', import.meta.url).pathname],
      metafile: true,
      logLevel: 'silent',
    });
    const outputs = result.metafile.outputs;
    const eager = new Set();
    const visit = (name) => {
      if (eager.has(name)) return;
      eager.add(name);
      for (const dependency of outputs[name].imports) {
        if (dependency.kind === 'import-statement' && outputs[dependency.path]) visit(dependency.path);
      }
    };
    visit(Object.keys(outputs).find((name) => outputs[name].entryPoint));
    return result.outputFiles
      .filter((file) => eager.has(relative(process.cwd(), file.path)))
      .reduce((total, file) => total + gzipSync(file.contents).byteLength, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
  return { ...loaded, esbuildGzipBytes: await esbuildFirstLoad(entry), packages, parts };
}

const size = await measureBundle();
const met = size.gzipBytes <= BUDGET_BYTES;
const esbuildMet = size.esbuildGzipBytes <= BUDGET_BYTES;
const shares = size.packages.map(([name, bytes]) => `${name} ${kib(bytes)}`).join(', ');
// Nothing is loaded later unless a dynamic import() comes back into the SDK: then this says how much.
const later =
  size.lazyChunks > 0 ? `; ${kib(size.lazyGzipBytes)} more in ${size.lazyChunks} chunks loaded later` : '';
if (process.argv.includes('--outcome')) {
  const outcome = {
    rows: [
      {
        measurement: '5. bundle, `import { AgentClient }`',
        result: `${kib(size.gzipBytes)} min+gzip up front (${kib(size.minBytes)} minified)${later}`,
        goal: `<= ${kib(BUDGET_BYTES)}`,
        status: met ? 'met' : 'NOT MET',
      },
      {
        measurement: '5. bundle, the same import through esbuild (splitting)',
        result: `${kib(size.esbuildGzipBytes)} min+gzip up front`,
        goal: `<= ${kib(BUDGET_BYTES)}`,
        status: esbuildMet ? 'met' : 'NOT MET',
      },
    ],
    details: [
      `rolldown (bundle, code splitting, ESM, browser platform) of \`${MAIN}\` over a fresh build of the ` +
        'package (tsup.config.ts), each chunk minified by esbuild (es2022) and gzipped at the default level, ' +
        'summed over the chunks the import loads before any code runs; esbuild with `splitting` (minified, ' +
        `the chunks its entry imports statically). Budget ${kib(BUDGET_BYTES)} with either bundler (npm run size exits 1 over it).`,
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
    `import { AgentClient } from 'agent-messaging': ${kib(size.gzipBytes)} min+gzip up front, ${kib(size.minBytes)} minified${later}`,
  );
  console.log(`the same import through esbuild (splitting): ${kib(size.esbuildGzipBytes)} min+gzip up front`);
  const verdict = (ok) => (ok ? 'within' : 'OVER');
  console.log(`budget ${kib(BUDGET_BYTES)}: rolldown ${verdict(met)}, esbuild ${verdict(esbuildMet)}`);
  console.log(`bytes by package (before minification, loaded up front): ${shares}`);
  for (const [name, bytes] of size.parts) console.log(`  ${name}: ${kib(bytes)} min+gzip`);
}
process.exitCode = met && esbuildMet ? 0 : 1;
