import type { Transport } from '../core/transport.js';

/** The base of every resource class: it holds the client's transport, which calls endpoints by key. */
export abstract class Resource {
  constructor(
    /** The client's transport, for the SDK's other modules (streaming). @internal */
    readonly _transport: Transport,
  ) {}
}
