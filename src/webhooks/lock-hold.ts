// Holding a conversation's lock while handlers run: renewed at a third of its TTL, so a live holder
// never loses it to expiry, and never past a maximum lifetime, so a stuck handler cannot hold the
// conversation forever (the lock then expires and the next holder takes over).

import type { BotStore, StoreLock } from '../store/bot-store.js';

/** Why a hold ended early: the store said the lock is gone, or the hold ran past its lifetime. */
export type HoldLoss = 'lost' | 'expired';

/** A held lock being renewed. @internal */
export interface LockHold {
  /** Set once the lock is no longer safely this holder's. */
  readonly loss: HoldLoss | undefined;
  /** A handler starts: the lock is kept at most `maxMs` from now. */
  arm(): void;
  /** The handler settled: its lifetime no longer counts. */
  disarm(): void;
  /** Stops renewing (the caller then releases, or lets it expire). */
  stop(): void;
}

/**
 * Renews `lock` every `ttlMs / 3` until stopped; calls `onLoss` once when a renewal answers `false`
 * or fails (a store that is down cannot prove the lock is still ours), or when an armed handler ran
 * `maxMs`.
 * @internal
 */
export function holdLock(
  store: BotStore,
  lock: StoreLock,
  options: { ttlMs: number; maxMs: number; onLoss: (loss: HoldLoss) => void },
): LockHold {
  let loss: HoldLoss | undefined;
  let stopped = false;
  const lose = (why: HoldLoss) => {
    if (loss || stopped) return;
    loss = why;
    stop();
    options.onLoss(why);
  };
  const renewal = setInterval(
    () => {
      store.renewLock(lock, options.ttlMs).then(
        (held) => {
          if (!held) lose('lost');
        },
        () => lose('lost'),
      );
    },
    Math.max(1, Math.floor(options.ttlMs / 3)),
  );
  let lifetime: ReturnType<typeof setTimeout> | undefined;
  // Timers of a bot must not keep a Node process alive on their own.
  (renewal as { unref?: () => void }).unref?.();
  const disarm = () => clearTimeout(lifetime);
  const stop = () => {
    stopped = true;
    clearInterval(renewal);
    disarm();
  };
  return {
    get loss() {
      return loss;
    },
    arm() {
      disarm();
      lifetime = setTimeout(() => lose('expired'), options.maxMs);
      (lifetime as { unref?: () => void }).unref?.();
    },
    disarm,
    stop,
  };
}
