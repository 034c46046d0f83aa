// `mock.handlers` is a property (API.md: `setupServer(...mock.handlers)`), so msw has to be loaded
// without `await`: through `require` of an ES module (Node 22.12+, Bun, Deno), reached with
// `process.getBuiltinModule` so that the testing entry imports no `node:` module and still runs
// elsewhere. msw stays an optional peer: without it, only this property fails, and says why.
import type { http as mswHttp } from 'msw';

type NodeModule = { createRequire(from: string): (id: string) => unknown };
type WithBuiltins = { process?: { getBuiltinModule?: (id: string) => unknown } };

const INSTALL = 'npm install --save-dev msw@3';
const OR_IMPORT = "or use mswHandlers(mock) from 'agent-messaging/testing/msw'";

/** msw's `http` namespace, loaded on first use. @internal */
export function loadMswHttp(): typeof mswHttp {
  const nodeModule = (globalThis as WithBuiltins).process?.getBuiltinModule?.('node:module') as
    | NodeModule
    | undefined;
  if (!nodeModule) {
    throw new Error(
      `mock.handlers loads msw synchronously, which needs Node 22.12+, Bun or Deno; ${OR_IMPORT}`,
    );
  }
  let msw: { http?: typeof mswHttp };
  try {
    msw = nodeModule.createRequire(import.meta.url)('msw') as { http?: typeof mswHttp };
  } catch (cause) {
    throw new Error(`mock.handlers needs msw, an optional peer dependency (${INSTALL}); ${OR_IMPORT}`, {
      cause,
    });
  }
  if (typeof msw.http?.all !== 'function') throw new Error(`mock.handlers needs msw 3 (${INSTALL})`);
  return msw.http;
}
