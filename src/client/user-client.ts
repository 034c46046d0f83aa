import { clientOptions, resolveConfig } from '../core/client-config.js';
import type { UserClientOptions } from '../core/options.js';
import { Transport } from '../core/transport.js';
import { UserConversations } from '../resources/conversations.js';
import { Invites } from '../resources/groups.js';
import { UserMessages } from '../resources/messages.js';
import { describeClient, inspectSymbol } from './inspect.js';

const OPTIONS = clientOptions('sessionToken', true);
/**
 * The client of a user, authenticated with a user session (an agent token is refused by these endpoints).
 *
 * @example
 * const user = new UserClient({ sessionToken, baseUrl });
 * const { conversation } = await user.conversations.createDirect({ user_id: 'usr_...' });
 */
export class UserClient {
  /** Create or reuse a direct conversation. */
  readonly conversations: UserConversations;
  /** Accept group invites. */
  readonly invites: Invites;
  /** Unsend the user's own messages. */
  readonly messages: UserMessages;
  /** The transport, for the SDK's other modules. @internal */
  readonly _transport: Transport;

  constructor(options: UserClientOptions) {
    const config = resolveConfig(options, OPTIONS, 'sessionToken', 'UserClient');
    this._transport = new Transport(config);
    this.conversations = new UserConversations(this._transport);
    this.invites = new Invites(this._transport);
    this.messages = new UserMessages(this._transport);
  }

  /** The base URL the client talks to. */
  get baseUrl(): string {
    return this._transport.baseUrl;
  }

  /** A summary without the session token. */
  toJSON(): Record<string, string> {
    return describeClient(this.baseUrl, 'sessionToken');
  }

  /** `console.log(user)` shows the summary, never the session token. */
  [inspectSymbol](): string {
    return `UserClient ${JSON.stringify(this.toJSON())}`;
  }
}
