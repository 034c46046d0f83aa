// Runs a script of the repository's source in a child Node process (through tsx), for behaviour a test
// cannot see inside its own process: what keeps Node alive, a runtime without node:crypto.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How a child ended: its stdout and stderr together (trimmed), its exit code and signal. */
export interface ScriptEnd {
  output: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Runs `source` (an ES module, from the repository's root) with `args`; killed after `killAfterMs`,
 * which leaves a loaded machine's slow tsx start far behind and stays inside the test's own limit.
 */
export async function runScript(
  source: string,
  args: string[] = [],
  killAfterMs = 45_000,
): Promise<ScriptEnd> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source, ...args], {
    cwd: ROOT,
  });
  let output = '';
  const collect = (chunk: string) => {
    output += chunk;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(killer);
  return { output: output.trim(), code, signal };
}

/**
 * Script lines that define `body`, a message.received event of id `eventId` ('hi' in cnv_1), for a
 * script that defines `eventId` first.
 */
export const EVENT_BODY = `
const body = JSON.stringify({ schema: 'svc.event.v1', eventId, type: 'message.received',
  createdAt: new Date().toISOString(), agentId: 'agt_1', conversationId: 'cnv_1',
  message: { id: 'msg_1', conversation_id: 'cnv_1', sequence: 1, sender: { id: 'usr_1' },
    parts: [{ part_index: 0, type: 'text', text: 'hi' }], fallback_text: 'hi', status: 'sent',
    created_at: new Date().toISOString() } });
`;
