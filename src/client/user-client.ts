import { clientOptions } from '../core/client-config.js';
import type { UserClientOptions } from '../core/options.js';
import { UserConversations } from '../resources/conversations.js';
import { Invites } from '../resources/groups.js';
import { UserMessages } from '../resources/messages.js';
import { ClientBase } from './client-base.js';

const OPTIONS = clientOptions('sessionToken', true);

/**
 * The client of a user, authenticated with a user session (an agent token is refused by these endpoints).
 *
 * @example
 * const user = new UserClient({ sessionToken, baseUrl });
 * const { conversation } = await user.conversations.createDirect({ user_id: 'usr_...' });
 */
export class UserClient extends ClientBase {
  /** Create or reuse a direct conversation. */
  readonly conversations: UserConversations;
  /** Accept group invites. */
  readonly invites: Invites;
  /** Unsend the user's own messages. */
  readonly messages: UserMessages;

  constructor(options: UserClientOptions) {
    super(options, OPTIONS, 'sessionToken', 'UserClient');
    this.conversations = new UserConversations(this._transport);
    this.invites = new Invites(this._transport);
    this.messages = new UserMessages(this._transport);
  }
}
