// Builds the package the way `npm run build` does (tsup.config.ts), without types, into a cache
// folder under node_modules (ignored by git, biome and tsc; dependencies still resolve from the
// project), so cold start and bundle size measure the published JavaScript of this checkout
// without touching dist/, which other work may be using.
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'tsup';
import { javascript } from '../../tsup.config.js';
import { ROOT } from './child.js';

// One folder per checkout: node_modules may be shared by several worktrees of the repository.
const checkout = createHash('sha256').update(ROOT).digest('hex').slice(0, 8);

/** Where the benchmark build goes. */
export const BUILD_DIR = join(ROOT, `node_modules/.cache/agent-messaging-bench-${checkout}/dist`);

/** Builds the package into BUILD_DIR and answers the path of its main entry. */
export async function buildPackage(): Promise<string> {
  await build({ ...javascript, outDir: BUILD_DIR, dts: false, silent: true, clean: true });
  const entry = join(BUILD_DIR, 'index.js');
  if (!existsSync(entry)) throw new Error(`the build wrote no ${entry}`);
  // The package.json of the real package, so `sideEffects: false` applies to the built files too.
  writeFileSync(join(BUILD_DIR, 'package.json'), JSON.stringify({ type: 'module', sideEffects: false }));
  return entry;
}
