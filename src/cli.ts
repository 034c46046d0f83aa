#!/usr/bin/env node
// The `agent-messaging` command line: `mock` and `demo`, their options, and one help text.
import { parseArgs } from 'node:util';
import { runDemo } from './demo/run-demo.js';
import { createMockService } from './testing/index.js';

const HELP = [
  'Usage: agent-messaging <command> [options]',
  '',
  '  mock   serve the mock service, with the emulator page at /, on http://127.0.0.1:<port> until Ctrl-C',
  '         -p, --port <port>      0 picks a free one (default 4010)',
  "  demo   run the end-to-end demo: the mock service, a bot, a user's message and the streamed reply",
  '         -t, --text <message>   what the user says (default "What can you do?")',
  '',
  '  -h, --help                    show this help',
].join('\n');

const OPTIONS = {
  port: { type: 'string', short: 'p', default: '4010' },
  text: { type: 'string', short: 't' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `agent-messaging mock`: serves the mock service until SIGINT or SIGTERM. */
async function serveMock(portText: string): Promise<number> {
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`--port: must be an integer from 0 to 65535, got "${portText}"`);
    return 2;
  }
  const server = await createMockService().listen({ port });
  console.log(server.baseUrl);
  console.error(`Agent Messaging mock service is listening. Emulator: ${server.baseUrl}/`);
  console.error('Press Ctrl-C to stop.');
  await new Promise((resolve) => process.once('SIGINT', resolve).once('SIGTERM', resolve));
  await server.close();
  return 0;
}

/** Runs the command line; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
    const [name, ...extra] = positionals;
    if (values.help || name === 'help' || name === undefined) {
      console.log(HELP);
      return name === undefined && !values.help ? 2 : 0;
    }
    if (name === 'mock' && extra.length === 0) return await serveMock(values.port);
    if (name === 'demo' && extra.length === 0) return await runDemo({ text: values.text });
    console.error(`Unknown command "${positionals.join(' ')}".\n\n${HELP}`);
    return 2;
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

// No top-level await: a module graph with one cannot be loaded through require().
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
