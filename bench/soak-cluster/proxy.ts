// A small round-robin HTTP proxy on loopback, the soak's load balancer: each request goes to the next
// live bot; a bot that dies mid-request (SIGKILL) leaves a 502, which the service retries.
import { once } from 'node:events';
import { createServer, request as forward } from 'node:http';

/** The proxy and the bots behind it. */
export interface Proxy {
  url: string;
  add(port: number): void;
  remove(port: number): void;
  close(): Promise<void>;
}

/** Starts the proxy with no bots behind it (503 until `add`). */
export async function startProxy(): Promise<Proxy> {
  const ports: number[] = [];
  let turn = 0;
  const server = createServer((inbound, outbound) => {
    const port = ports[turn++ % Math.max(1, ports.length)];
    if (port === undefined) {
      outbound.writeHead(503).end();
      return;
    }
    const upstream = forward(
      { host: '127.0.0.1', port, method: inbound.method, path: inbound.url, headers: inbound.headers },
      (answer) => {
        outbound.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outbound);
        answer.on('error', () => outbound.destroy());
      },
    );
    upstream.on('error', () => {
      if (!outbound.headersSent) outbound.writeHead(502).end();
      else outbound.destroy();
    });
    inbound.pipe(upstream);
  });
  server.keepAliveTimeout = 1000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('proxy: no address');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    add: (port) => void ports.push(port),
    remove(port) {
      const index = ports.indexOf(port);
      if (index !== -1) ports.splice(index, 1);
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
