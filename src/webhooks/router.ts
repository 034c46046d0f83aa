// Routing of a verified event to the bot's handlers: middleware around everything, then for a user
// message the first route that matches, in this order: a quick-reply click (`action`), a command,
// `hears`, a mention in a group; a message no route took falls through to `message.received`.
// `onAny` handlers run after, for every event.

import { ValidationError } from '../core/errors.js';
import { annotate, type Traced } from '../telemetry.js';
import type { EventContext, Handler, MessageContext } from './bot-types.js';

/** A `(ctx, next)` step around the handlers, as in Bolt and grammY. */
export type Middleware<C = EventContext> = (ctx: C, next: () => Promise<void>) => unknown;

interface Route {
  /** How the handler span names it: `command /help`, `hears /weather/i`, `action yes`. */
  name: string;
  /** What the route is matched on; `undefined` when it does not match this message. */
  match(ctx: MessageContext): RegExpExecArray | true | undefined;
  handler: Handler<MessageContext>;
}

const fail = (field: string, message: string, operation: string): never => {
  throw new ValidationError([{ field, message }], operation);
};

/** A regex used for matching: a global or sticky one keeps `lastIndex` between messages, so it is refused. */
function checkPattern(pattern: unknown, operation: string, strings: string): RegExp | string {
  if (pattern instanceof RegExp) {
    if (pattern.global || pattern.sticky) {
      fail(
        'pattern',
        'must not have the g or y flag (lastIndex would carry over between messages)',
        operation,
      );
    }
    return pattern;
  }
  if (typeof pattern !== 'string' || pattern === '')
    fail('pattern', `must be a RegExp or ${strings}`, operation);
  return pattern as string;
}

/** Refuses a handler (or middleware) that is not a function, naming `handler`. @internal */
export function checkHandler(handler: unknown, operation: string): void {
  if (typeof handler !== 'function') fail('handler', 'must be a function', operation);
}

const NONE: readonly never[] = [];
// A click before a command, a command before hears (one array, not one per message).
const ROUTE_ORDER = ['action', 'command', 'hears'] as const;

/**
 * A command name in lower case, A to Z only: full Unicode case folding maps other letters onto
 * ASCII ones (the Kelvin sign K onto k, the dotted I onto i), so `/\u212Aick` would run `/kick`.
 */
const foldCommand = (name: string) => name.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());

/** Whether a handler answered something to wait for: one that returned no promise costs no turn. */
const thenable = (result: unknown): result is PromiseLike<unknown> =>
  typeof (result as PromiseLike<unknown> | undefined)?.then === 'function';

/** The questions' answer step: true (or a promise of it) when a question took the message. */
type AnswerStep = (ctx: MessageContext, isCommand: boolean) => false | Promise<boolean>;

/** The router of one bot. @internal */
export function createRouter() {
  // Asked first for every user message, once the bot declared a question (`answerWith`).
  let answer: AnswerStep | undefined;
  const middleware: Middleware[] = [];
  const routes: Record<'action' | 'command' | 'hears', Route[]> = { action: [], command: [], hears: [] };
  const typed = new Map<string, Handler<EventContext>[]>();
  const any: Handler<EventContext>[] = [];

  /** Adds a route of `kind` after the others of its kind, once its handler is checked. */
  const add = (kind: keyof typeof routes, label: string, handler: unknown, match: Route['match']) => {
    checkHandler(handler, `bot.${kind}`);
    routes[kind].push({ name: `${kind} ${label}`, match, handler: handler as Handler<MessageContext> });
  };

  const pick = (ctx: MessageContext) => {
    for (const kind of ROUTE_ORDER) {
      for (const route of routes[kind]) {
        const match = route.match(ctx);
        if (match) return { route, match, kind };
      }
    }
    return undefined;
  };

  const handle = async (ctx: EventContext, span: Traced | undefined) => {
    let route: string | undefined = ctx.event.type;
    let handlers: readonly Handler<EventContext>[] = typed.get(route) ?? NONE;
    if (route === 'message.received') {
      const message = ctx as MessageContext;
      const picked = pick(message);
      // A pending question's answer goes to it (questions.ts), before the routes; commands never do.
      const taken = answer?.(message, picked?.kind === 'command') ?? false;
      if (taken !== false && (await taken)) {
        // Answered: the question's onAnswer ran instead of the routes.
        route = undefined;
        handlers = NONE;
      } else if (picked) {
        route = picked.route.name;
        if (picked.match !== true) message.match = picked.match;
        handlers = [picked.route.handler as Handler<EventContext>];
      } else if (typed.has('mention') && message.mentioned && message.isGroup) {
        route = 'mention';
        handlers = typed.get('mention')!;
      }
    }
    if (route) annotate(span, { route });
    for (const handler of handlers.concat(any)) {
      const result = handler(ctx);
      if (thenable(result)) await result;
    }
  };

  return {
    /** From now on, a user message goes to the questions' answer step before the routes. */
    answerWith(step: AnswerStep) {
      answer = step;
    },
    /** Runs the middleware chain, then the routes and handlers, for one event; `span` is its run's. */
    dispatch(ctx: EventContext, span: Traced | undefined): Promise<void> {
      const step = async (index: number): Promise<void> => {
        const current = middleware[index];
        if (!current) return handle(ctx, span);
        let called = false;
        await current(ctx, () => {
          if (called) return Promise.reject(new Error('next() was called twice by one middleware'));
          called = true;
          return step(index + 1);
        });
      };
      // Most bots have no middleware: straight to the routes, without an async frame around them.
      return middleware.length === 0 ? handle(ctx, span) : step(0);
    },
    use(fn: unknown) {
      checkHandler(fn, 'bot.use');
      middleware.push(fn as Middleware);
    },
    on(type: unknown, handler: unknown) {
      if (typeof type !== 'string' || type === '') fail('type', 'must be an event type string', 'bot.on');
      checkHandler(handler, 'bot.on');
      // 'mention' is no event type: its handlers are the route of a group message naming the bot.
      typed.set(type as string, [...(typed.get(type as string) ?? []), handler as Handler<EventContext>]);
    },
    onAny(handler: unknown) {
      checkHandler(handler, 'bot.onAny');
      any.push(handler as Handler<EventContext>);
    },
    command(name: unknown, handler: unknown) {
      if (typeof name !== 'string' || !/^\/[^\s/]+$/.test(name)) {
        fail('command', "must be a slash and a word, like '/help'", 'bot.command');
      }
      const wanted = foldCommand(name as string);
      add('command', wanted, handler, (ctx) => {
        const [first = '', ...rest] = ctx.text.trim().split(/\s+/);
        // '/help@echo_bot' names the bot it is meant for, as in group chats elsewhere.
        if (foldCommand(first.split('@')[0]!) !== wanted) return undefined;
        ctx.command = { name: wanted, args: rest.join(' ') };
        return true;
      });
    },
    hears(pattern: unknown, handler: unknown) {
      const checked = checkPattern(pattern, 'bot.hears', 'a non-empty string (the whole text)');
      add('hears', String(checked), handler, (ctx) =>
        typeof checked === 'string'
          ? ctx.text.trim() === checked || undefined
          : (checked.exec(ctx.text) ?? undefined),
      );
    },
    action(pattern: unknown, handler: unknown) {
      const checked = checkPattern(pattern, 'bot.action', 'a non-empty action id or value');
      add('action', String(checked), handler, ({ action }) => {
        if (!action) return undefined;
        if (typeof checked === 'string')
          return checked === action.actionId || checked === action.value || undefined;
        return checked.exec(action.actionId) ?? checked.exec(action.value) ?? undefined;
      });
    },
  };
}
