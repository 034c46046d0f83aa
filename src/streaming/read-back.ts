// Reading a reply's message back from history, to learn exactly what the service applied.
import { AgentMessagingError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import type { Transport } from '../core/transport.js';
import { ListMessagesResponse, type Message } from '../schemas/index.js';

/** What the service holds of a reply. @internal */
export interface AppliedState {
  /** The text of the reply's block. */
  text: string;
  status: Message['status'];
  revision: number | undefined;
}

const PAGE = 100;
// A reply is among the newest messages; a conversation this busy while it streams is not expected.
const MAX_PAGES = 10;

/**
 * Finds the message in history (newest first) and returns the text of its part `blockIndex`, its
 * status and its revision. The history call is a read, so the transport retries it as usual.
 * @internal
 */
export async function readBack(
  transport: Transport,
  conversationId: string,
  messageId: string,
  blockIndex: number,
  request: RequestOptions,
  operation: string,
): Promise<AppliedState> {
  const { signal, timeoutMs, headers } = request;
  let before: number | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { messages } = await transport.request({
      method: 'GET',
      path: `/v1/conversations/${conversationId}/messages`,
      query: { limit: PAGE, before_sequence: before },
      schema: ListMessagesResponse,
      operation,
      options: { signal, timeoutMs, headers },
    });
    const found = messages.find((message) => message.id === messageId);
    if (found) {
      const part = found.parts?.find((candidate) => candidate.part_index === blockIndex);
      return { text: part?.text ?? '', status: found.status, revision: found.revision };
    }
    const lowest = messages.at(-1)?.sequence;
    if (messages.length < PAGE || lowest === undefined || lowest <= 1) break;
    before = lowest;
  }
  throw new AgentMessagingError(
    `${operation}: message ${messageId} is not in the conversation's history, so the reply cannot be resumed.`,
  );
}
