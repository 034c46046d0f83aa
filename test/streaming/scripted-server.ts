// A loopback service that misbehaves on purpose (issue 11), for what only a hostile server can show:
// patches never acknowledged under keep-alives, lines applied after the connection was cut, events
// out of order or of another message. It holds one conversation with one reply message and speaks
// just the endpoints a reply uses: the streaming start (NDJSON or JSON), append, complete, history.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the server misbehaves; by default it behaves. */
export interface Script {
  /** Echo applied patch lines as `message.patch` events (default true). */
  echo?: boolean;
  /**
   * Hold patch lines unapplied; once the client cut the connection, apply them `lateMs` later, all
   * at once, or one every `spacingMs` after the first (a service draining a backlog).
   */
  applyLate?: { lateMs: number; spacingMs?: number };
  /** Answer a completion line with `message.completed` (default true). */
  ackCompletion?: boolean;
  /** Write `: keep-alive` this often while a stream is open. */
  keepAliveMs?: number;
  /** Raw SSE text written right after `message.started`. */
  afterStarted?: string;
  /** Applies this text too when the complete endpoint is called (a change the writer never made). */
  onComplete?: string;
  /** Applies each append through the endpoint twice. */
  doubleAppends?: boolean;
}

/** One request the server received. */
export interface ScriptedRequest {
  method: string;
  path: string;
  contentType: string | undefined;
}

export const CONVERSATION = 'cnv_scripted';
const MESSAGE = 'msg_scripted';
const BLOCK = 'blk_scripted';

/** Starts the server on a free loopback port. */
export async function startScriptedServer(script: Script = {}) {
  const message = { exists: false, text: '', revision: 0, status: 'streaming' as 'streaming' | 'sent' };
  const requests: ScriptedRequest[] = [];
  const open = new Set<ServerResponse>();
  let seq = 0;

  const event = (type: string, data: Record<string, unknown>) => {
    seq += 1;
    const body = {
      schema: 'svc.event.v1',
      eventId: `evt_s${seq}`,
      conversationId: CONVERSATION,
      type,
      seq,
      ...data,
    };
    return `event: ${type}\ndata: ${JSON.stringify(body)}\n\n`;
  };
  const apply = (value: string) => {
    message.text += value;
    message.revision += 1;
  };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  function startStream(req: IncomingMessage, res: ServerResponse, ndjson: boolean) {
    const replayed = message.exists;
    message.exists = true;
    seq = 0;
    open.add(res);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    const content = [{ id: BLOCK, type: 'text', text: message.text }];
    res.write(event('message.started', { message: { id: MESSAGE, content } }));
    if (script.afterStarted) res.write(script.afterStarted);
    const beat = script.keepAliveMs
      ? setInterval(() => res.write(': keep-alive\n\n'), script.keepAliveMs)
      : undefined;
    const held: string[] = [];
    let rest = '';
    let first = true;
    req.on('data', (chunk: Buffer) => {
      if (!ndjson) return;
      rest += chunk.toString('utf8');
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines.filter(Boolean)) {
        const parsed = JSON.parse(line) as { type?: string; patch?: { value: string } };
        if (first) first = false;
        else if (parsed.type === 'message.patch' && parsed.patch) {
          if (script.applyLate) held.push(parsed.patch.value);
          else {
            apply(parsed.patch.value);
            if (script.echo !== false) {
              const patch = { op: 'appendText', blockId: BLOCK, path: '/text', value: parsed.patch.value };
              res.write(event('message.patch', { messageId: MESSAGE, patch }));
            }
          }
        } else if (parsed.type === 'message.completed' && script.ackCompletion !== false) {
          message.status = 'sent';
          res.end(event('message.completed', { messageId: MESSAGE }));
        }
      }
    });
    res.on('close', () => {
      clearInterval(beat);
      open.delete(res);
      // The lines were in the server's pipeline when the client gave up: they land anyway, late.
      const late = script.applyLate;
      if (late && held.length > 0) {
        const land = (values: string[]) => {
          for (const value of values) if (message.status === 'streaming') apply(value);
        };
        if (late.spacingMs === undefined) setTimeout(() => land(held.splice(0)), late.lateMs);
        else {
          held.splice(0).forEach((value, i) => {
            setTimeout(() => land([value]), late.lateMs + i * (late.spacingMs ?? 0));
          });
        }
      }
    });
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://scripted.test');
    requests.push({ method: req.method ?? '', path: url.pathname, contentType: req.headers['content-type'] });
    if (req.method === 'POST' && url.pathname === `/v1/conversations/${CONVERSATION}/messages`) {
      return startStream(req, res, req.headers['content-type'] === 'application/x-ndjson');
    }
    const body = await bodyOf(req);
    if (req.method === 'POST' && url.pathname === `/v1/messages/${MESSAGE}/blocks/${BLOCK}/append`) {
      if (message.status !== 'streaming') return notStreaming(res);
      const { value } = JSON.parse(body) as { value: string };
      apply(value);
      if (script.doubleAppends) apply(value);
      return json(res, 200, { message_id: MESSAGE, block_id: BLOCK, revision: message.revision });
    }
    if (req.method === 'POST' && url.pathname === `/v1/messages/${MESSAGE}/complete`) {
      if (message.status !== 'streaming') return notStreaming(res);
      if (script.onComplete) apply(script.onComplete);
      message.status = 'sent';
      return json(res, 200, { message_id: MESSAGE, status: 'sent', revision: message.revision });
    }
    if (req.method === 'GET' && url.pathname === `/v1/conversations/${CONVERSATION}/messages`) {
      const parts = [{ part_index: 0, type: 'text', text: message.text }];
      const history = message.exists
        ? [
            {
              id: MESSAGE,
              conversation_id: CONVERSATION,
              sequence: 1,
              sender: { id: 'agt_scripted' },
              parts,
              status: message.status,
              created_at: new Date(0).toISOString(),
              revision: message.revision,
            },
          ]
        : [];
      return json(res, 200, { messages: history });
    }
    json(res, 404, { error: { code: 'not_found', message: 'not scripted' } });
  });
  const notStreaming = (res: ServerResponse) =>
    json(res, 409, { error: { code: 'message_not_streaming', message: 'the message is not streaming' } });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    message,
    requests,
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += (chunk as Buffer).toString('utf8');
  return text;
}
