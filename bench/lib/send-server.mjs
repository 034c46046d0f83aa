// A minimal loopback server for the send-CPU benchmark, run in its own process so its CPU is not
// counted: it reads each request body and answers the send response of SPEC.md (201, Request-Id).
import { createServer } from 'node:http';

let counter = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    counter += 1;
    const sent = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    const text = sent.content?.[0]?.text ?? '';
    const conversationId = req.url.split('/')[3] ?? 'cnv_bench';
    const body = JSON.stringify({
      message: {
        id: `msg_bench${counter}`,
        conversationId,
        status: 'sent',
        content: [{ id: `blk_bench${counter}`, type: 'text', text }],
      },
    });
    res.writeHead(201, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'request-id': `req_bench${counter}`,
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('disconnect', () => process.exit(0));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
