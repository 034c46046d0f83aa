import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^agent-messaging\/testing$/, replacement: src('testing/index.ts') },
      { find: /^agent-messaging\/testing\/msw$/, replacement: src('testing/msw.ts') },
      { find: /^agent-messaging\/node$/, replacement: src('node.ts') },
      { find: /^agent-messaging\/redis$/, replacement: src('redis/index.ts') },
      { find: /^agent-messaging\/chat-sdk$/, replacement: src('chat-sdk/index.ts') },
      { find: /^agent-messaging$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Limits for a test that hangs, not for a slow one: a loaded machine (npm run test:busy) runs the
    // tests that start Node processes through tsx, or a browser, several times slower than an idle one.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll gives up after 1 s by default: on a loaded machine a wait for a TTL to run out or for a
    // delivery to land can take longer than that and still be right. A poll ends as soon as it holds,
    // so a long limit costs a passing test nothing.
    expect: { poll: { timeout: 10_000 } },
  },
});
