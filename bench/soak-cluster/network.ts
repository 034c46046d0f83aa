// The service's side of the soak's network: every delivery the mock makes goes through here to the
// bots' proxy. It notes which event delivered which user message (`c3 m7` -> webhook id). Made
// faulty, it also gives each event's first delivery a fate at random (answer lost, delivered twice,
// connection failed); a redelivery always goes straight through.

/** What befell an event's first delivery. */
export type Fate = 'delivered' | 'answer lost' | 'delivered twice' | 'connection failed';

/** The network, and what it saw. */
export function startNetwork(options: { random: () => number; faulty: boolean }) {
  const fates = new Map<string, Fate>();
  const eventOf = new Map<string, string>();
  let live = false;
  // What failed is in the error's cause (ECONNRESET, ECONNREFUSED, ...): the mock's delivery log says it.
  const fetch = (request: Request) =>
    globalThis.fetch(request).catch((error: unknown) => {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new TypeError(`fetch failed: ${cause?.code ?? cause?.message ?? String(error)}`);
    });
  const fetchThrough = async (request: Request): Promise<Response> => {
    // Before the bots are up (the webhook.test) a plain 204.
    if (!live) return new Response(null, { status: 204 });
    const id = request.headers.get('webhook-id') ?? '';
    if (fates.has(id)) return fetch(request);
    const event = (await request.clone().json()) as { message?: { parts?: { text?: string }[] } };
    const text = event.message?.parts?.[0]?.text;
    if (text) eventOf.set(text, id);
    const roll = options.faulty ? options.random() : 1;
    const fate: Fate =
      roll < 0.1
        ? 'answer lost'
        : roll < 0.2
          ? 'delivered twice'
          : roll < 0.25
            ? 'connection failed'
            : 'delivered';
    fates.set(id, fate);
    if (fate === 'connection failed') throw new TypeError('fetch failed: connection refused');
    if (fate === 'answer lost') {
      await fetch(request);
      return new Response(null, { status: 502 });
    }
    if (fate === 'delivered twice') {
      const [first] = await Promise.all([fetch(request.clone()), fetch(request)]);
      return first;
    }
    return fetch(request);
  };
  return {
    fetch: fetchThrough,
    fates,
    eventOf,
    /** From now on deliveries go to the bots. */
    open: () => {
      live = true;
    },
  };
}
