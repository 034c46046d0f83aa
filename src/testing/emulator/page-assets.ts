// The emulator page's three files: page/index.html and page/emulator.css as they are, and page/app.ts
// with everything it imports bundled by esbuild into one browser module. Run from source (tests,
// `npm run mock`), the bundle is made on first use with esbuild (a devDependency, through tsup); the
// package's build (tsup.config.ts) replaces this module with the finished text, so the published
// package never needs esbuild.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page as served: its HTML, its stylesheet, and its one script. */
export type PageAssets = Record<'html' | 'css' | 'js', string>;

/** Reads and bundles the page from its sources in `dir` (src/testing/emulator/page). */
export async function buildPageAssets(
  dir = fileURLToPath(new URL('./page', import.meta.url)),
): Promise<PageAssets> {
  const { build } = await import('esbuild');
  const [html, css, bundle] = await Promise.all([
    readFile(join(dir, 'index.html'), 'utf8'),
    readFile(join(dir, 'emulator.css'), 'utf8'),
    build({
      entryPoints: [join(dir, 'app.ts')],
      bundle: true,
      format: 'esm',
      charset: 'utf8',
      write: false,
      logLevel: 'silent',
    }),
  ]);
  return { html, css, js: bundle.outputFiles[0]?.text ?? '' };
}

let assets: Promise<PageAssets> | undefined;

/** The page, built once per process. */
export function pageAssets(): Promise<PageAssets> {
  assets ??= buildPageAssets();
  return assets;
}
