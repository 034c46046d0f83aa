// Measurement 5 and the CI budget: min+gzip of `import { AgentClient } from 'agent-messaging'`,
// bundled by esbuild from a fresh build of the package. Two numbers: issue 7's goal (25 KiB), which the
// chosen dependencies alone nearly fill (BENCHMARKS.md), and the CI budget, a ceiling just above
// today's size so that growth fails CI. Exits 1 over the CI budget.
// `node bench/bundle-size.mjs` (the `size` script); `--outcome` prints a line for bench/run.ts.
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
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

/** Bundles `contents` as a consumer's bundler would (browser or worker); `external` leaves packages out. */
function bundle(contents, entry, external = []) {
  return build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'js' },
    alias: { 'agent-messaging': entry },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    external,
  });
}

const gzipOf = async (contents, entry, external) =>
  gzipSync((await bundle(contents, entry, external)).outputFiles[0].contents).byteLength;

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
  const result = await bundle(MAIN, entry);
  const code = result.outputFiles[0].contents;
  const source = new URL('../src/index.ts', import.meta.url).pathname;
  const fromSource = await bundle(MAIN, source);
  const byPackage = new Map();
  for (const output of Object.values(fromSource.metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      byPackage.set(packageOf(path), (byPackage.get(packageOf(path)) ?? 0) + bytesInOutput);
    }
  }
  const packages = [...byPackage].sort((a, b) => b[1] - a[1]);
  const parts = await breakdown(source);
  return { minBytes: code.byteLength, gzipBytes: gzipSync(code).byteLength, packages, parts };
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
      `esbuild (bundle, minify, ESM, browser platform, es2022) of \`${MAIN}\` over a fresh build of the ` +
        'package (tsup.config.ts); gzip at its default level.',
      '',
      `Minified bytes by package (the same import bundled from the source): ${shares}.`,
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
  console.log(`goal ${kib(BUDGET_BYTES)}: ${met ? 'met' : 'not met (see BENCHMARKS.md)'}`);
  console.log(`CI budget ${kib(CI_BUDGET_BYTES)}: ${size.gzipBytes <= CI_BUDGET_BYTES ? 'within' : 'OVER'}`);
  console.log(`minified bytes by package: ${shares}`);
  for (const [name, bytes] of size.parts) console.log(`  ${name}: ${kib(bytes)} min+gzip`);
}
process.exitCode = size.gzipBytes <= CI_BUDGET_BYTES ? 0 : 1;
