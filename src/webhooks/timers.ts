// The bot's timers: every deadline the bot keeps (a delivery's ack timeout, a handler's lifetime, a
// lock's or a claim's next renewal) sits in a list of deadlines of one duration under one timer. A
// timer per delivery was most of the SDK's own timer cost on node:http: a delivery that is handled
// within one turn of the event loop creates and clears its timer in that turn, so Node made and
// dropped a timer list (and re-armed its libuv timer) for every delivery. Here the deadlines wait in
// a list in the order they were added, which is their order of expiry since they all last as long,
// and one timer, armed for the oldest, is left running when that one is removed: it re-arms itself
// for the next oldest when it fires. A delivery waiting on a held conversation polls through a list
// of its own; the other waits of a pending delivery (the debounce window, a gap's pause) use the SDK's
// one `sleep` (core/retry.ts). Both keep the process alive while the delivery is pending. `within`
// bounds a wait on a promise by one such deadline (a delivery's ack, a retry's wait for its run).

/** A deadline in its list: what to call, with what, and when. @internal */
export interface Deadline {
  at: number;
  fire: (arg: unknown) => void;
  arg: unknown;
  prev: Deadline | undefined;
  next: Deadline | undefined;
  /** False once fired or removed, so a second removal does nothing. */
  listed: boolean;
}

/** Deadlines of one duration under one timer. @internal */
export interface Deadlines {
  /** Calls `fire(arg)` once `ms` have passed, unless the deadline is removed first. */
  add<A>(fire: (arg: A) => void, arg: A): Deadline;
  remove(deadline: Deadline): void;
}

// setTimeout takes at most 2^31 - 1 ms (Node fires a longer one after 1 ms); a longer wait re-arms.
const MAX_DELAY = 2 ** 31 - 1;

type Timer = ReturnType<typeof setTimeout> & { ref?: () => unknown; unref?: () => unknown };

/**
 * A list of deadlines of `ms` each under one timer. With `keepAlive`, a runtime with `ref`/`unref`
 * timers (Node) is kept alive while a deadline is listed, as by a timer of its own; without it, the
 * deadlines never keep it alive. @internal
 */
export function createDeadlines(ms: number, keepAlive: boolean): Deadlines {
  let head: Deadline | undefined;
  let tail: Deadline | undefined;
  let timer: Timer | undefined;
  // When the running timer was meant to fire: it is trusted to have reached that time even if the
  // clock disagrees (a timer fires up to a millisecond early; fake timers move no monotonic clock).
  let armedFor = 0;
  // True while due deadlines fire: one that adds another (a renewal re-arming itself) must not arm a
  // second timer beside the one `expire` arms for the new head when it is done.
  let firing = false;

  const unlink = (deadline: Deadline) => {
    deadline.listed = false;
    if (deadline.prev) deadline.prev.next = deadline.next;
    else head = deadline.next;
    if (deadline.next) deadline.next.prev = deadline.prev;
    else tail = deadline.prev;
    deadline.prev = deadline.next = undefined;
  };

  const arm = (now: number, wait: number) => {
    const delay = Math.min(Math.max(0, Math.ceil(wait)), MAX_DELAY);
    armedFor = now + delay;
    timer = setTimeout(expire, delay) as Timer;
    if (!keepAlive) timer.unref?.();
  };

  function expire() {
    timer = undefined;
    firing = true;
    const now = Math.max(performance.now(), armedFor);
    try {
      while (head && head.at <= now) {
        const due = head;
        unlink(due);
        due.fire(due.arg);
      }
    } finally {
      firing = false;
      if (head) arm(now, head.at - now);
    }
  }

  return {
    add(fire, arg) {
      const now = performance.now();
      const deadline: Deadline = {
        at: now + ms,
        fire: fire as (arg: unknown) => void,
        arg,
        prev: tail,
        next: undefined,
        listed: true,
      };
      const wasEmpty = head === undefined;
      if (tail) tail.next = deadline;
      else head = deadline;
      tail = deadline;
      if (timer === undefined) {
        if (!firing) arm(now, ms);
      }
      // The timer left running for a removed deadline does not keep the process alive on its own.
      else if (keepAlive && wasEmpty) timer.ref?.();
      return deadline;
    },
    remove(deadline) {
      if (!deadline.listed) return;
      unlink(deadline);
      if (keepAlive && head === undefined) timer?.unref?.();
    },
  };
}

/**
 * Resolves with the work's outcome, or with `'timeout'` when it outlasts the deadlines' duration: a
 * delivery's wait for its handlers, and a retry's wait for the run it repeats. @internal
 */
export function within<T>(work: Promise<T>, deadlines: Deadlines): Promise<T | 'timeout'> {
  return new Promise((resolve, reject) => {
    const deadline = deadlines.add(resolve, 'timeout');
    const end = () => deadlines.remove(deadline);
    work.then(end, end);
    work.then(resolve, reject);
  });
}
