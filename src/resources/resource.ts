import type * as z from 'zod/mini';
import { ApiPromise } from '../core/api-promise.js';
import type { RequestSpec, Transport } from '../core/transport.js';

/** The base of every resource class: it holds the client's transport. */
export abstract class Resource {
  /** The client's transport, for the SDK's other modules (streaming). @internal */
  readonly _transport: Transport;

  constructor(transport: Transport) {
    this._transport = transport;
  }

  /** Runs `build` (which validates the input) and sends; a bad input rejects the returned promise. */
  protected _request<S extends z.ZodMiniType>(build: () => RequestSpec<S>): ApiPromise<z.output<S>> {
    let spec: RequestSpec<S>;
    try {
      spec = build();
    } catch (error) {
      return new ApiPromise<z.output<S>>(Promise.reject(error));
    }
    return this._transport.request(spec);
  }
}
