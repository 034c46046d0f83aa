// What a Chat SDK bot posts, as the service's send shape. Text, markdown and ASTs become one text
// block (the service shows markdown source as the user's client renders it); a card becomes its
// text plus an `actions` block whose buttons are postbacks (PROTOCOL.md section 14), and every
// card element the service has no block for becomes fallback text. Files are uploaded first.

import {
  type AdapterPostableMessage,
  type CardElement,
  cardChildToFallbackText,
  type FileUpload,
  isCardElement,
  stringifyMarkdown,
} from 'chat';
import type { SendBlock } from '../schemas/messages.js';

/** A postback's value when the button has none: the service requires a non-empty value. */
export const NO_VALUE = '\u0000';

type Button = { type: 'button'; id: string; label: string; value?: string; disabled?: boolean };
type Actions = Extract<SendBlock, { type: 'actions' }>['actions'];

/** The message to send, before its files are uploaded. */
export interface PostableParts {
  text: string;
  actions: Actions;
  files: FileUpload[];
}

// The enabled buttons of a card, in its actions blocks and their sections.
function buttonsOf(children: readonly { type: string; children?: unknown }[]): Button[] {
  return children.flatMap((child) => {
    const items = (Array.isArray(child.children) ? child.children : []) as { type: string }[];
    if (child.type === 'section') return buttonsOf(items);
    if (child.type !== 'actions') return [];
    return (items as Button[]).filter((item) => item.type === 'button' && !item.disabled);
  });
}

// A card as text: its title, its subtitle and each element's fallback text (actions have none:
// their postback buttons have a block of their own).
function cardText(card: CardElement): string {
  return [card.title, card.subtitle, ...card.children.map(cardChildToFallbackText)]
    .filter(Boolean)
    .join('\n');
}

function textOf(message: AdapterPostableMessage): string {
  if (typeof message === 'string') return message;
  if ('raw' in message) return message.raw;
  if ('markdown' in message) return message.markdown;
  if ('ast' in message) return stringifyMarkdown(message.ast).trimEnd();
  return '';
}

/** Splits a postable message into its text, its quick replies and its files. */
export function toPostableParts(message: AdapterPostableMessage): PostableParts {
  const files =
    typeof message === 'object' && message !== null && 'files' in message ? (message.files ?? []) : [];
  const wrapper =
    typeof message === 'object' && 'card' in message && isCardElement(message.card) ? message : undefined;
  const card = isCardElement(message) ? message : wrapper?.card;
  if (!card) return { text: textOf(message), actions: [], files };
  const actions = buttonsOf(card.children).map((button) => ({
    actionId: button.id,
    label: button.label,
    behavior: { type: 'postback' as const, value: button.value || NO_VALUE },
  }));
  return { text: wrapper?.fallbackText || cardText(card), actions, files };
}
