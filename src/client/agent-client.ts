import { clientOptions } from '../core/client-config.js';
import type { AgentClientOptions } from '../core/options.js';
import { Agents } from '../resources/agents.js';
import { Attachments } from '../resources/attachments.js';
import { Conversations } from '../resources/conversations.js';
import { Groups } from '../resources/groups.js';
import { Messages } from '../resources/messages.js';
import { ClientBase } from './client-base.js';

const OPTIONS = clientOptions('apiKey', true);

/**
 * The client of an agent, authenticated with its API key.
 * A missing or blank `apiKey`, or a missing or malformed `baseUrl`, throws a ValidationError here.
 *
 * @example
 * const client = new AgentClient({ apiKey: process.env.AMS_API_KEY!, baseUrl: 'https://ams.example.com' });
 * await client.messages.send('cnv_...', { text: 'Hello' });
 */
export class AgentClient extends ClientBase {
  /** The webhook setting. */
  readonly agents: Agents;
  /** Upload handles and uploads. */
  readonly attachments: Attachments;
  /** Send, append, complete, unsend, react. */
  readonly messages: Messages;
  /** Read a conversation and its history; typing, receipts, read marks. */
  readonly conversations: Conversations;
  /** Group invites. */
  readonly groups: Groups;

  constructor(options: AgentClientOptions) {
    super(options, OPTIONS, 'apiKey', 'AgentClient');
    this.agents = new Agents(this._transport);
    this.attachments = new Attachments(this._transport);
    this.messages = new Messages(this._transport);
    this.conversations = new Conversations(this._transport);
    this.groups = new Groups(this._transport);
  }
}
