import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';
import { buildPageAssets } from './src/testing/emulator/page-assets.js';

// The emulator page is bundled now, into the package: its loader module becomes the finished text.
const emulatorPage: Plugin = {
  name: 'emulator-page',
  setup(build) {
    build.onLoad({ filter: /emulator[\\/]page-assets\.ts$/ }, async () => {
      const assets = JSON.stringify(await buildPageAssets('src/testing/emulator/page'));
      return { contents: `export const pageAssets = async () => (${assets});` };
    });
  },
};

// ESM only: Node 22.12+ loads it from `require()` as well (require(esm)), which the packed-tarball
// smoke test proves; a CJS build would crash at runtime on the ESM-only dependencies.
const entry = {
  index: 'src/index.ts',
  'testing/index': 'src/testing/index.ts',
  'testing/msw': 'src/testing/msw.ts',
  node: 'src/node.ts',
  'redis/index': 'src/redis/index.ts',
  'chat-sdk/index': 'src/chat-sdk/index.ts',
};

const shared: Options = { format: ['esm'], target: 'node22', platform: 'neutral', clean: false };

/** The JavaScript of every entry (the bench builds this one alone). */
export const javascript: Options = {
  ...shared,
  entry: { ...entry, cli: 'src/cli.ts' },
  splitting: true,
  sourcemap: false,
  treeshake: true,
  // ky, zod and eventsource-parser are bundled in: one module graph to load instead of about 100
  // files (64 of them zod locale files the SDK never uses). They stay in `dependencies`. nanoid stays
  // external: it has a browser build of its own, which a consumer's bundler must still pick.
  noExternal: ['ky', 'zod', 'eventsource-parser'],
  external: ['msw', 'msw/node', 'chat', /^node:/],
  esbuildPlugins: [emulatorPage],
};

export default defineConfig([
  javascript,
  // Each entry's declarations on their own: declarations split into shared chunks lose the difference
  // between a type and a value in the `schemas` namespace (`declare const x: typeof SomeType`).
  ...Object.entries(entry).map(([name, path]) => ({
    ...shared,
    entry: { [name]: path },
    dts: { only: true },
  })),
]);
