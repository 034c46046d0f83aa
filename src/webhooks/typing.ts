// Keeping the typing indicator alive while a handler works. The service lets a `start` lapse after
// 10 s (PROTOCOL.md section 10), so it is renewed a little before that, and `stop` is sent once at the end.

/** How often a running typing indicator is renewed; below the service's 10 s lifetime. */
export const TYPING_RENEW_MS = 8000;

/** Sends one typing state for the conversation. */
export type SendTyping = (state: 'start' | 'stop') => Promise<unknown>;

/** Stops a typing indicator: no more renewals, then one `stop`. Calling it again does nothing. */
export type StopTyping = () => Promise<void>;

/**
 * A {@link StopTyping} that can hold the `stop` back: renewals end at once, the `stop` is sent once
 * `after` settled (a reply's first token goes out ahead of it). @internal
 */
export type StopTypingAfter = (after?: PromiseLike<unknown>) => Promise<void>;

/**
 * Starts the indicator and renews it every `renewMs` until stopped. A failed typing call is reported
 * to `onError` and never thrown: the indicator is cosmetic and must not fail the reply it decorates.
 */
export async function keepTyping(
  send: SendTyping,
  options: { renewMs?: number | undefined; onError: (error: unknown) => void },
): Promise<StopTypingAfter> {
  const { renewMs = TYPING_RENEW_MS, onError } = options;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending: Promise<unknown> = Promise.resolve();

  const renew = () => {
    timer = setTimeout(() => {
      pending = send('start').catch(onError);
      // The next renewal is scheduled only after this one answered, so slow answers never pile up.
      void pending.then(() => {
        if (!stopped) renew();
      });
    }, renewMs);
    // A forgotten indicator must not keep a Node process alive.
    (timer as { unref?: () => void }).unref?.();
  };

  pending = send('start').catch(onError);
  await pending;
  renew();

  let stopping: Promise<void> | undefined;
  return (after) => {
    stopping ??= (async () => {
      stopped = true;
      clearTimeout(timer);
      // Let a renewal in flight land first, so the `stop` is the last state the service sees.
      await pending;
      await Promise.resolve(after).catch(() => {});
      await send('stop').catch(onError);
    })();
    return stopping;
  };
}
