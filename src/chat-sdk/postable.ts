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

/** The message to send, before its files are uploaded. */
export interface PostableParts {
  text: string;
  actions: { actionId: string; label: string; behavior: { type: 'postback'; value: string } }[];
  files: FileUpload[];
}

function cardOf(message: AdapterPostableMessage): { card: CardElement; fallbackText?: string } | undefined {
  if (isCardElement(message)) return { card: message };
  if (typeof message === 'object' && message !== null && 'card' in message && isCardElement(message.card)) {
    return { card: message.card, ...(message.fallbackText ? { fallbackText: message.fallbackText } : {}) };
  }
  return undefined;
}

function buttonsOf(card: CardElement): Button[] {
  const buttons: Button[] = [];
  const visit = (children: readonly { type: string; children?: unknown }[]) => {
    for (const child of children) {
      if (child.type === 'actions') {
        for (const item of (child.children ?? []) as { type: string }[]) {
          if (item.type === 'button' && !(item as Button).disabled) buttons.push(item as Button);
        }
      } else if (child.type === 'section' && Array.isArray(child.children)) {
        visit(child.children as { type: string }[]);
      }
    }
  };
  visit(card.children);
  return buttons;
}

function cardText(card: CardElement, buttons: readonly Button[]): string {
  const lines: string[] = [];
  if (card.title) lines.push(card.title);
  if (card.subtitle) lines.push(card.subtitle);
  for (const child of card.children) {
    // Postback buttons have a block of their own; everything else is kept as text.
    if (child.type === 'actions' && child.children.every((item) => buttons.includes(item as Button)))
      continue;
    const text = cardChildToFallbackText(child);
    if (text) lines.push(text);
  }
  return lines.join('\n');
}

/** Splits a postable message into its text, its quick replies and its files. */
export function toPostableParts(message: AdapterPostableMessage): PostableParts {
  const files =
    typeof message === 'object' && message !== null && 'files' in message ? (message.files ?? []) : [];
  const card = cardOf(message);
  if (card) {
    const buttons = buttonsOf(card.card);
    return {
      text: card.fallbackText ?? cardText(card.card, buttons),
      actions: buttons.map((button) => ({
        actionId: button.id,
        label: button.label,
        behavior: {
          type: 'postback',
          value: button.value === undefined || button.value === '' ? NO_VALUE : button.value,
        },
      })),
      files,
    };
  }
  if (typeof message === 'string') return { text: message, actions: [], files };
  if ('raw' in message) return { text: message.raw, actions: [], files };
  if ('markdown' in message) return { text: message.markdown, actions: [], files };
  if ('ast' in message) return { text: stringifyMarkdown(message.ast).trimEnd(), actions: [], files };
  return { text: '', actions: [], files };
}

/** The content blocks of a message whose files were uploaded as `attachmentIds`. */
export function toContent(
  parts: PostableParts,
  attachments: readonly { id: string; image: boolean }[],
): SendBlock[] {
  const content: SendBlock[] = [];
  if (parts.text !== '') content.push({ type: 'text', text: parts.text });
  for (const { id, image } of attachments) content.push({ type: image ? 'image' : 'file', attachmentId: id });
  if (parts.actions.length > 0)
    content.push({ type: 'actions', layout: 'quick_replies', actions: parts.actions });
  return content;
}
