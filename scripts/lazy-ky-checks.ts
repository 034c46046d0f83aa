// An esbuild plugin for the package build (tsup.config.ts). ky decides at import whether the runtime
// streams request bodies by constructing a Request, and reads globalThis.FormData and ReadableStream:
// on Node each of these loads the fetch internals (undici) before any request is made, a large part
// of the SDK's cold start. In the bundled package those three checks run on first use instead, with
// the same results. A ky release that changes these lines fails the build rather than slipping by.
import { readFile } from 'node:fs/promises';
import type { Plugin } from 'esbuild';

const LAZY = ['supportsRequestStreams', 'supportsResponseStreams', 'supportsFormData'];

function replaceOnce(text: string, from: string, to: string, path: string): string {
  if (!text.includes(from)) throw new Error(`lazy-ky-checks: "${from}" is not in ${path}; ky changed`);
  return text.replace(from, to);
}

/** Makes ky's import-time feature checks lazy (constants.js defines them, Ky.js reads them). */
export const lazyKyChecks: Plugin = {
  name: 'lazy-ky-checks',
  setup(build) {
    build.onLoad(
      { filter: /[\\/]ky[\\/]distribution[\\/]core[\\/](constants|Ky)\.js$/ },
      async ({ path }) => {
        const source = await readFile(path, 'utf8');
        if (path.endsWith('constants.js')) {
          let text = replaceOnce(
            source,
            'export const supportsRequestStreams = (() => {',
            'let requestStreams;\nexport const supportsRequestStreams = () => requestStreams ??= (() => {',
            path,
          );
          for (const name of ['supportsResponseStreams', 'supportsFormData']) {
            text = replaceOnce(
              text,
              `export const ${name} = typeof`,
              `export const ${name} = () => typeof`,
              path,
            );
          }
          return { contents: text, loader: 'js' };
        }
        // Every read after the import statement becomes a call.
        const end = source.indexOf("from './constants.js';");
        const uses = new RegExp(`\\b(${LAZY.join('|')})\\b`, 'g');
        const body = source.slice(end);
        if (end < 0 || (body.match(uses) ?? []).length < LAZY.length + 1) {
          throw new Error(`lazy-ky-checks: the feature checks moved in ${path}; ky changed`);
        }
        return { contents: source.slice(0, end) + body.replace(uses, '$1()'), loader: 'js' };
      },
    );
  },
};
