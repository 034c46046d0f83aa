// Raw HTTP/1.1 over a socket, for requests fetch refuses to send (TRACE, a bad Host).
import { connect } from 'node:net';

/** Sends `head` (the request line and headers) and `body`, and answers the status and body. */
export function rawRequest(
  port: number,
  head: string[],
  body = '',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    const length = body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body)}`];
    socket.write(`${[...head, ...length, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
  });
}
