// What must have gone over the wire after one runtime ran scenario.mjs, read from the mock's own
// request log and delivery log (the scenario checks what came back; this checks what was sent).

import { CheckFailed } from './workspace.mjs';

function check(condition, message, actual) {
  if (!condition)
    throw new CheckFailed(`${message}${actual === undefined ? '' : `; got ${JSON.stringify(actual)}`}`);
}

const is2xx = (status) => typeof status === 'number' && status >= 200 && status < 300;

/**
 * Checks the requests and deliveries of one scenario run against a freshly reset mock, and answers
 * what is worth reporting: how the reply was streamed and the runtime's fetch user-agent.
 */
export function checkWire(mock, runtime) {
  const requests = mock.requests;
  const find = (method, pattern, query = () => true) =>
    requests.filter((r) => r.method === method && pattern.test(r.path) && query(r.query));

  const registrations = find('POST', /^\/v1\/agents$/);
  check(registrations.length === 1, 'one registration', registrations.length);
  check(
    JSON.parse(registrations[0].body).handle === `smoke_${runtime}`,
    'registered the handle',
    registrations[0].body,
  );
  check(!registrations[0].headers.authorization, 'registration sends no token', registrations[0].headers);

  const [patch] = find('PATCH', /^\/v1\/agents\/agt_[^/]+\/webhook$/);
  check(patch?.headers.authorization === 'Bearer ***', 'setWebhook carries the agent token', patch?.headers);

  const messagePath = /^\/v1\/conversations\/cnv_[^/]+\/messages$/;
  const sends = find('POST', messagePath, (q) => q.stream === undefined);
  check(sends.length === 1, 'one plain send', sends.length);
  check(
    (sends[0].headers['idempotency-key'] ?? '').length >= 8,
    'the send has an Idempotency-Key',
    sends[0].headers,
  );
  check(
    JSON.parse(sends[0].body).schema === 'svc.agent-send.v1',
    'the send carries the schema',
    sends[0].body,
  );

  const streams = find('POST', messagePath, (q) => q.stream === 'true');
  check(streams.length === 1, 'the reply opened one streaming send', streams.length);
  const ndjson = (streams[0].headers['content-type'] ?? '').includes('application/x-ndjson');
  const appends = find('POST', /^\/v1\/messages\/msg_[^/]+\/blocks\/blk_[^/]+\/append$/);
  const completes = find('POST', /^\/v1\/messages\/msg_[^/]+\/complete$/);
  if (!ndjson) {
    check(appends.length >= 1 && completes.length === 1, 'the append fallback appends and completes', {
      appends: appends.length,
      completes: completes.length,
    });
  }

  const pages = find('GET', messagePath);
  check(
    pages.length === 2 && pages.every((p) => p.query.limit === '2'),
    'history read two pages of 2',
    pages,
  );
  check(pages[1]?.query.before_sequence === '2', 'the second page asks before sequence 2', pages[1]?.query);

  const deliveries = mock.deliveries;
  for (const type of ['webhook.test', 'message.received']) {
    const attempts = deliveries.filter((d) => d.type === type);
    check(attempts.length === 1 && is2xx(attempts[0].status), `one ${type} delivery, answered 2xx`, attempts);
  }

  return {
    transport: ndjson
      ? 'streamed NDJSON request body (one request)'
      : `append fallback (${appends.length} append, ${completes.length} complete)`,
    userAgent: registrations[0].headers['user-agent'] ?? '(none)',
    requests: requests.length,
  };
}
