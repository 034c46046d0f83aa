// Measurement 5 and the CI budget: min+gzip of `import { AgentClient } from 'agent-messaging'`,
// bundled by esbuild from a fresh build of the package. Exits 1 over 25 KiB.
// `node bench/bundle-size.mjs` (the `size` script); `--outcome` prints a line for bench/run.ts.
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { register } from 'tsx/esm/api';

/** The budget of the main entry, min+gzip. */
export const BUDGET_BYTES = 25 * 1024;

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Where the bytes of a bundle input come from: a package name, or the SDK itself. */
function packageOf(path) {
  const at = path.lastIndexOf('node_modules/');
  if (at === -1 || path.includes('agent-messaging-bench/')) return 'agent-messaging (the SDK)';
  const [scope, name] = path.slice(at + 'node_modules/'.length).split('/');
  return scope.startsWith('@') ? `${scope}/${name}` : scope;
}

/** Builds the package, bundles the import for a browser or worker, and answers sizes by package. */
export async function measureBundle() {
  const unregister = register();
  const { buildPackage } = await import('./lib/build.ts');
  const entry = await buildPackage();
  await unregister();
  const result = await build({
    stdin: {
      contents: "export { AgentClient } from 'agent-messaging';",
      resolveDir: process.cwd(),
      loader: 'js',
    },
    alias: { 'agent-messaging': entry },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  const byPackage = new Map();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      byPackage.set(packageOf(path), (byPackage.get(packageOf(path)) ?? 0) + bytesInOutput);
    }
  }
  const packages = [...byPackage].sort((a, b) => b[1] - a[1]);
  return { minBytes: code.byteLength, gzipBytes: gzipSync(code).byteLength, packages };
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
      'esbuild (bundle, minify, ESM, browser platform, es2022) of `export { AgentClient } from ' +
        "'agent-messaging'` over a fresh build of the package (tsup.config.ts); gzip at its default level.",
      '',
      `Minified bytes by package: ${shares}.`,
    ],
  };
  process.stdout.write(`@@outcome ${JSON.stringify(outcome)}\n`);
} else {
  console.log(
    `import { AgentClient } from 'agent-messaging': ${kib(size.gzipBytes)} min+gzip, ${kib(size.minBytes)} minified`,
  );
  console.log(`budget ${kib(BUDGET_BYTES)}: ${met ? 'within' : 'OVER'}`);
  console.log(`minified bytes by package: ${shares}`);
}
process.exitCode = met ? 0 : 1;
