// Small terminal helpers for the demo: colour only on a TTY that wants it.

const useColour =
  typeof process !== 'undefined' &&
  process.stdout.isTTY === true &&
  !process.env.NO_COLOR &&
  process.env.TERM !== 'dumb';

const paint = (code: string) => (text: string) => (useColour ? `\u001b[${code}m${text}\u001b[0m` : text);

export const bold = paint('1');
export const dim = paint('2');
export const green = paint('32');
export const cyan = paint('36');

/** Writes without a newline, so a reply can grow on its line. */
export const write = (text: string) => process.stdout.write(text);

/** One line of the setup checklist. */
export const step = (label: string, detail: string) =>
  console.log(`  ${green('✓')} ${label.padEnd(18)} ${dim(detail)}`);
