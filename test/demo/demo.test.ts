import { afterEach, describe, expect, it, vi } from 'vitest';
// Private: the demo is the CLI's command, not a public export; its own modules are what is tested.
import { demoAnswer, runDemo } from '../../src/demo/run-demo.js';

describe('the demo', () => {
  afterEach(() => vi.restoreAllMocks());

  it('streams the bot reply live and ends with the exact text in history', async () => {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(console, 'log').mockImplementation((...args) => {
      out.push(`${args.join(' ')}\n`);
    });

    const code = await runDemo({ text: 'hello there', tokenDelayMs: 10 });
    const printed = out.join('');

    expect(code).toBe(0);
    expect(printed).toContain('webhook verified');
    expect(printed).toContain(demoAnswer('hello there'));
    expect(printed).toContain('holds exactly the text the bot wrote');
    expect(printed).toMatch(/the reply took 1 streamed request/);
    // The reply arrived in several pieces, not as one write at the end.
    const replyPieces = out
      .map((chunk) => chunk.replace(/\u001b\[\d+m/g, ''))
      .filter((chunk) => chunk.length > 0 && demoAnswer('hello there').includes(chunk));
    expect(replyPieces.length).toBeGreaterThan(2);
    expect(Number(printed.match(/(\d+) patches applied live/)?.[1])).toBeGreaterThan(2);
  });

  it('refuses an empty text before starting anything', async () => {
    await expect(runDemo({ text: '   ' })).rejects.toThrow('text: must not be empty');
  });
});
