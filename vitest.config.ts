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
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll gives up after 1 s by default: on a loaded machine a wait for a TTL to run out or for a
    // delivery to land can take longer than that and still be right. A poll ends as soon as it holds,
    // so a long limit costs a passing test nothing.
    expect: { poll: { timeout: 10_000 } },
  },
});
