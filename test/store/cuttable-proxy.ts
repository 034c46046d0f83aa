// A loopback TCP door in front of a real Redis that a test can shut and open again: to the client it
// is Redis going away (a crash, a network cut) and coming back, whether the server is ours or REDIS_URL's.

import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A loopback TCP door in front of the real server that a test can shut, as a network cut or a crash would. */
export async function cuttableProxy(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = async () => {
    server = createServer((inbound) => {
      const outbound = connect(Number(target.port), target.hostname);
      sockets.add(inbound).add(outbound);
      inbound.pipe(outbound).pipe(inbound);
      for (const socket of [inbound, outbound]) socket.on('error', () => socket.destroy());
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (typeof address === 'object' && address) port = address.port;
  };
  await open();
  return {
    url: () => `redis://127.0.0.1:${port}`,
    async cut() {
      const closed = server ? once(server, 'close') : Promise.resolve();
      server?.close();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await closed;
    },
    open,
  };
}
