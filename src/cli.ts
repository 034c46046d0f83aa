#!/usr/bin/env node
// The `agent-messaging` command line: a small dispatcher of named commands, each with its own
// options and help. Add a command by adding an entry to `commands`.
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { runDemo } from './demo/run-demo.js';
import { createMockService } from './testing/index.js';

/**
 * One command of the command line: its line in the command list, its `--help` text, its options
 * besides `--help` (which every command takes), and what it runs, resolving with the exit code.
 */
export interface Command {
  summary: string;
  usage: string;
  options: ParseArgsOptionsConfig;
  run(values: Record<string, string | boolean | undefined>): Promise<number>;
}

/** `agent-messaging mock [--port 4010]`: serves the mock service until Ctrl-C. */
const mock: Command = {
  summary: 'serve the in-memory mock of the Agent Messaging Service on 127.0.0.1',
  usage: [
    'Usage: agent-messaging mock [--port <port>]',
    '',
    'Serves /v1, /_mock and the file URLs on http://127.0.0.1:<port> and prints the base URL.',
    'Ctrl-C stops it.',
    '',
    'Options:',
    '  -p, --port <port>  port to listen on; 0 picks a free one (default 4010)',
    '  -h, --help         show this help',
  ].join('\n'),
  options: { port: { type: 'string', short: 'p', default: '4010' } },
  async run(values) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      console.error(`--port: must be an integer from 0 to 65535, got "${values.port}"`);
      return 2;
    }
    const server = await createMockService().listen({ port });
    console.log(server.baseUrl);
    console.error(`Agent Messaging mock service is listening. Emulator: ${server.baseUrl}/`);
    console.error('Press Ctrl-C to stop.');
    await new Promise((resolve) => process.once('SIGINT', resolve).once('SIGTERM', resolve));
    await server.close();
    return 0;
  },
};

/** `agent-messaging demo`: the end-to-end demo on loopback ports. */
const demo: Command = {
  summary: 'run the end-to-end demo: mock service, a bot, a user, and a streamed reply',
  usage: [
    'Usage: agent-messaging demo [--text <message>]',
    '',
    'Starts the mock service and a demo bot on loopback ports, registers the agent, verifies its webhook,',
    "posts a user's message and shows the bot's streamed reply as it grows. No network, no configuration.",
    '',
    'Options:',
    '  -t, --text <message>  what the user says (default "What can you do?")',
    '  -h, --help            show this help',
  ].join('\n'),
  options: { text: { type: 'string', short: 't' } },
  async run(values) {
    return runDemo(typeof values.text === 'string' ? { text: values.text } : {});
  },
};

/** Every command, by name. */
export const commands: Record<string, Command> = { mock, demo };

function help(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  return [
    'Usage: agent-messaging <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    '',
    'Run `agent-messaging <command> --help` for the options of a command.',
  ].join('\n');
}

/** Runs the command line; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${help()}`);
    return 2;
  }
  try {
    const options = { ...command.options, help: { type: 'boolean', short: 'h' } } as const;
    const { values } = parseArgs({ args: rest, options, strict: true });
    if (values.help) {
      console.log(command.usage);
      return 0;
    }
    return await command.run(values);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

// No top-level await: a module graph with one cannot be loaded through require().
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
