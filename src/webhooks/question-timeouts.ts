// Question timeouts that fire with no message: a timer every second (unref'd, so it never keeps a
// process alive) walks the due index in the bot store (question-store.ts) and fires each question
// whose deadline passed. Every instance walks it; the end claim (setIfAbsent) makes one of them, and
// only one, run the timeout, and never once an answer took the question. The instance that won holds
// a lease on it, renewed while `onTimeout` runs: if it dies, another retakes the timeout once the
// lease lapsed and runs it again; its replies carry keys derived from the question, so the retry
// replays what the first run posted instead of posting twice. A failed `onTimeout` is retried the
// same way, at most MAX_TIMEOUT_ATTEMPTS times. Runtimes without timers between requests call
// `bot.fireDueQuestions()` themselves (a Workers cron trigger).

import { idempotencyKeyFor } from '../core/idempotency.js';
import { renewalEveryMs } from '../store/bot-store.js';
import type { BotReplyOptions, BotReplyResult } from './bot-types.js';
import { createContextReply } from './context-reply.js';
import { BY_TIMEOUT, type Ending, endingOf, endMarked, type QuestionStore } from './question-store.js';
import type {
  Asker,
  AskOptions,
  QuestionDefinition,
  QuestionDeps,
  QuestionTimeoutContext,
} from './questions.js';

/** How often each instance walks the due index: a timeout fires within about this of its deadline. */
export const QUESTION_TICK_MS = 1000;
/** How many times a timeout handler is started before it is given up (reported). */
const MAX_TIMEOUT_ATTEMPTS = 5;
/** How long after a failed timeout handler it is tried again. */
const RETRY_AFTER_MS = 5000;

/** What the timeouts need: the questions' own dependencies, their store steps, declarations and ask. @internal */
export type TimeoutDeps = QuestionDeps & {
  model: QuestionStore;
  definitions: ReadonlyMap<string, QuestionDefinition<unknown>>;
  /** `ctx.ask` for a timeout handler: asked by the timeout of `questionId`. */
  ask(from: Asker, name: string, text: string, options?: AskOptions): Promise<BotReplyResult>;
};

/** What one look at a due question did. */
type FireResult = 'fired' | 'finished' | 'pending';

/** The timeout side of the questions: fire one question, walk the index, the timer. @internal */
export function createTimeouts(deps: TimeoutDeps) {
  const { model, nowMs } = deps;

  /** The timeout handler's context: replies keyed on the question, replying to it. */
  const timeoutContext = (ending: Ending, signal: AbortSignal) => {
    let replies = 0;
    const replier = createContextReply({
      client: deps.client,
      conversationId: ending.conversationId,
      messageId: ending.questionId,
      nextReplyKey: () => {
        replies += 1;
        return idempotencyKeyFor(ending.questionId, replies === 1 ? 'timeout' : `timeout-${replies}`);
      },
      signal,
      store: deps.store,
      writerLeaseMs: deps.leaseMs,
      typingRenewMs: deps.typingRenewMs,
      warn: (error) => deps.warn('a typing call failed', { questionId: ending.questionId, error }),
    });
    // Each of its messages says the question timed out (metadata.question_end).
    const reply = (text: Parameters<QuestionTimeoutContext['reply']>[0], options?: BotReplyOptions) =>
      replier.reply(text, endMarked(options, ending.questionId, 'timed_out'));
    const ctx: QuestionTimeoutContext = {
      conversationId: ending.conversationId,
      question: { id: ending.questionId, name: ending.name },
      client: deps.client,
      signal,
      reply,
      ask: (name, text, options) =>
        deps.ask(
          { conversationId: ending.conversationId, askedBy: `timeout:${ending.questionId}`, reply },
          name,
          text,
          options,
        ),
    };
    return { ctx, finish: replier.finish };
  };

  /** Runs the claimed timeout under its lease; answers whether it finished. */
  const run = async (claimed: string, ending: Ending): Promise<FireResult> => {
    const controller = new AbortController();
    let current = claimed;
    // Renewals are chained, so the last one has settled before the end is written over `current`.
    let renewing: Promise<void> = Promise.resolve();
    const renew = () => {
      renewing = renewing.then(async () => {
        const next = await model.swapEnding(current, { ...ending, leaseUntil: nowMs() + deps.leaseMs });
        if (next) current = next;
        else controller.abort(new Error('The question timeout was taken over by another instance.'));
      });
    };
    const timer = setInterval(renew, renewalEveryMs(deps.leaseMs));
    (timer as { unref?: () => void }).unref?.();
    let failed = false;
    try {
      const definition = deps.definitions.get(ending.name);
      if (!definition) {
        deps.warn('a question timed out that this bot does not declare', { name: ending.name });
      } else if (definition.onTimeout) {
        const made = timeoutContext(ending, controller.signal);
        try {
          await definition.onTimeout(made.ctx, ending.state);
        } finally {
          await made.finish();
        }
      }
    } catch (error) {
      failed = true;
      deps.report(error);
    } finally {
      clearInterval(timer);
      await renewing;
    }
    if (controller.signal.aborted) return 'pending'; // another instance owns it now
    if (failed) {
      // Tried again once this shorter lease lapsed, by whichever instance walks the index first.
      await model.swapEnding(current, { ...ending, leaseUntil: nowMs() + RETRY_AFTER_MS });
      return 'pending';
    }
    const { leaseUntil: _lease, ...rest } = ending;
    await model.swapEnding(current, { ...rest, done: true });
    await model.markEnded(ending.conversationId, ending.questionId, BY_TIMEOUT);
    return 'fired';
  };

  /**
   * Fires question `questionId` of the conversation if it is due and nothing else ended it: claims
   * its end (or retakes a timeout whose instance's lease lapsed), then runs its handler.
   */
  const fire = async (conversationId: string, questionId: string): Promise<FireResult> => {
    const now = nowMs();
    const ended = await model.ending(questionId);
    if (ended === undefined) {
      const found = await model.current(conversationId);
      // Replaced by a newer question, or ended: nothing to fire.
      if (found?.asked.id !== questionId || found.asked.ended !== undefined) return 'finished';
      const { asked } = found;
      if (asked.deadline === undefined || asked.deadline > now) return 'pending';
      const ending = endingOf(asked, BY_TIMEOUT, { leaseUntil: now + deps.leaseMs, attempts: 1 });
      const claimed = await model.claim(ending);
      // Someone else decided it just now: the next walk sees how.
      return claimed ? run(claimed, ending) : 'pending';
    }
    const { raw, ending } = ended;
    if (ending.by !== BY_TIMEOUT || ending.done) return 'finished';
    if ((ending.leaseUntil ?? 0) > now) return 'pending'; // another instance is running it
    const attempts = (ending.attempts ?? 1) + 1;
    if (attempts > MAX_TIMEOUT_ATTEMPTS) {
      const { leaseUntil: _lease, ...rest } = ending;
      if (await model.swapEnding(raw, { ...rest, done: true })) {
        deps.report(
          new Error(`The timeout of question ${ending.name} failed ${attempts - 1} times; given up.`),
        );
        await model.markEnded(conversationId, questionId, BY_TIMEOUT);
      }
      return 'finished';
    }
    const retaken = { ...ending, leaseUntil: now + deps.leaseMs, attempts };
    const claimed = await model.swapEnding(raw, retaken);
    return claimed ? run(claimed, retaken) : 'pending';
  };

  // One walk at a time in this process; a call made during one walks again after it, at its own time.
  let chain: Promise<unknown> = Promise.resolve();
  const walk = async () => {
    let fired = 0;
    await model.walkDue(nowMs(), async (conversationId, questionId) => {
      const result = await fire(conversationId, questionId);
      if (result === 'fired') fired += 1;
      return result !== 'pending';
    });
    return fired;
  };
  const fireDue = (): Promise<number> => {
    const next = chain.then(walk, walk);
    chain = next.catch(() => undefined);
    return deps.track(next);
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  let ticking = false;
  let stopped = false;
  // A store that is down fails every tick: its first failure is reported, then none until a walk works.
  let failing = false;
  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      await fireDue();
      failing = false;
    } catch (error) {
      if (!failing) deps.report(error);
      failing = true;
    } finally {
      ticking = false;
    }
  };

  return {
    fire,
    fireDue,
    /** Starts the timer (once); where timers cannot be set outside a request, fireDue is the way. */
    start() {
      if (timer !== undefined || stopped) return;
      try {
        timer = setInterval(tick, QUESTION_TICK_MS);
        (timer as { unref?: () => void }).unref?.();
      } catch {
        // Workers refuse timers in the global scope: the author calls bot.fireDueQuestions() from a cron.
      }
    },
    /** Stops the timer for good. */
    stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
