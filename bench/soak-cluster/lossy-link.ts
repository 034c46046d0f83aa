// A lossy TCP link between the bots and Redis: every connection goes through here. While lossy, each
// connection is, every quarter second, cut at random (both ends destroyed, as a dropped NAT entry or a
// failed switch does: the client reconnects) or stalled (nothing forwarded either way for 0.3 to 2 s,
// as a link dropping packets until TCP resends them), so every cut or stall lasts at most 2 s.
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

/** The link, and what it did. */
export interface LossyLink {
  /** `redis://127.0.0.1:PORT` of the link's end the bots connect to. */
  url: string;
  /** Starts or stops the losses. */
  lossy(on: boolean): void;
  cuts: number;
  stalls: number;
  close(): Promise<void>;
}

/** Starts a link to `port` on loopback; it forwards faithfully until `lossy(true)`. */
export async function startLossyLink(port: number, random: () => number): Promise<LossyLink> {
  const pairs = new Set<[Socket, Socket]>();
  let timer: ReturnType<typeof setInterval> | undefined;
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => to.write(chunk));
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => pairs.delete(pair));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('lossy link: no address');
  const link: LossyLink = {
    url: `redis://127.0.0.1:${address.port}`,
    cuts: 0,
    stalls: 0,
    lossy(on) {
      clearInterval(timer);
      timer = undefined;
      if (!on) return;
      timer = setInterval(() => {
        for (const pair of pairs) {
          const roll = random();
          if (roll < 0.02) {
            link.cuts++;
            for (const socket of pair) socket.destroy();
          } else if (roll < 0.05 && !pair[0].isPaused()) {
            link.stalls++;
            for (const socket of pair) socket.pause();
            setTimeout(
              () => {
                for (const socket of pair) socket.resume();
              },
              300 + random() * 1700,
            );
          }
        }
      }, 250);
    },
    async close() {
      clearInterval(timer);
      for (const pair of pairs) for (const socket of pair) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return link;
}
