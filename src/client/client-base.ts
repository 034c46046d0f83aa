// What both clients share: one transport made from their checked options, and a summary for logs
// that never shows the credential.

import type * as z from 'zod/mini';
import { resolveConfig } from '../core/client-config.js';
import type { ConnectionOptions } from '../core/options.js';
import { Transport } from '../core/transport.js';

/** Node's hook for `util.inspect` / `console.log`, by its registered symbol (no import of node:util). */
const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/** The base of AgentClient and UserClient. */
export abstract class ClientBase {
  /** The transport, for the SDK's other modules. @internal */
  readonly _transport: Transport;
  readonly #name: string;
  readonly #credential: string;

  /** Checks `options` against `schema` (a ValidationError naming the option, never its value). */
  protected constructor(options: ConnectionOptions, schema: z.ZodMiniType, credential: string, name: string) {
    this._transport = new Transport(resolveConfig(options, schema, credential, name));
    this.#name = name;
    this.#credential = credential;
  }

  /** The base URL the client talks to. */
  get baseUrl(): string {
    return this._transport.baseUrl;
  }

  /** A summary without the credential. */
  toJSON(): Record<string, string> {
    return { baseUrl: this.baseUrl, [this.#credential]: '[redacted]' };
  }

  /** `console.log(client)` shows the summary, never the credential. */
  [inspectSymbol](): string {
    return `${this.#name} ${JSON.stringify(this.toJSON())}`;
  }
}
