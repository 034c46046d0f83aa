// Deliveries of this process waiting for a conversation's lock to be released. A waiter registers
// before it tries the lock, so a release between its failed try and its wait still wakes it (the
// lanes also hear releases of other instances through the store, and poll for a holder that died).

/** A registered wait for the next release of one conversation's lock. @internal */
export interface ReleaseWait {
  /** Resolves at the next release (or when `wake` is called). */
  released: Promise<void>;
  /** Resolves `released` now (a release heard from another instance). */
  wake: () => void;
  /** Forgets the wait; call it once the waiter stopped waiting. */
  cancel: () => void;
}

/** The waiters of one bot's lanes, by conversation. @internal */
export function createReleaseWaiters() {
  const releases = new Map<string, Set<() => void>>();

  /** Wakes every waiter of the conversation; called by the holder once it released the lock. */
  const notifyReleased = (conversationId: string) => {
    const wakers = releases.get(conversationId);
    releases.delete(conversationId);
    for (const wake of wakers ?? []) wake();
  };

  /** Registers a wait for the conversation's next release in this process. */
  const nextRelease = (conversationId: string): ReleaseWait => {
    let wake!: () => void;
    const released = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const wakers = releases.get(conversationId) ?? new Set<() => void>();
    releases.set(conversationId, wakers);
    wakers.add(wake);
    const cancel = () => {
      wakers.delete(wake);
      if (wakers.size === 0 && releases.get(conversationId) === wakers) releases.delete(conversationId);
    };
    return { released, wake, cancel };
  };

  return { notifyReleased, nextRelease };
}
