import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { moduleOf } from '../../bench/lib/cpu-profile.js';
import { recordStream } from '../../bench/lib/recorded-stream.js';
import { replaceSection } from '../../bench/lib/report.js';
import { median, percentile, seededRandom, slope } from '../../bench/lib/stats.js';

describe('the statistics of the benchmarks', () => {
  it('takes the middle value, or the mean of the middle two, as the median', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('picks percentiles by nearest rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 95)).toBe(95);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([7], 50)).toBe(7);
  });

  it('finds the slope of a straight line and zero for a flat one', () => {
    expect(slope([0, 1, 2, 3].map((x) => ({ x, y: 2 * x + 1 })))).toBeCloseTo(2);
    expect(slope([0, 1, 2].map((x) => ({ x, y: 4 })))).toBe(0);
  });

  it('replays the same random sequence from the same seed and another from another seed', () => {
    const take = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(take(7)).toEqual(take(7));
    expect(take(7)).not.toEqual(take(8));
    expect(take(7).every((value) => value >= 0 && value < 1)).toBe(true);
  });
});

describe('the sections of BENCHMARKS.md', () => {
  it('replaces its own section and keeps the text around it', () => {
    const text = '# Title\n\nnotes\n\n<!-- bench:start -->\nold\n<!-- bench:end -->\n\nmore notes\n';
    const next = replaceSection(text, 'bench', 'new table');
    expect(next).toBe(
      '# Title\n\nnotes\n\n<!-- bench:start -->\nnew table\n<!-- bench:end -->\n\nmore notes\n',
    );
  });

  it('appends a section the file does not have yet, leaving the other sections alone', () => {
    const text = '# Title\n\n<!-- bench:start -->\nbench\n<!-- bench:end -->\n';
    const next = replaceSection(text, 'soak', 'soak table');
    expect(next).toContain('<!-- bench:start -->\nbench\n<!-- bench:end -->');
    expect(next.endsWith('<!-- soak:start -->\nsoak table\n<!-- soak:end -->\n')).toBe(true);
  });
});

describe('the recorded stream', () => {
  it('holds the events and text it claims, in the service format, across its chunk boundaries', () => {
    const recording = recordStream({ bytes: 64 * 1024, patch: 'token', chunkBytes: 1000 });
    const types: string[] = [];
    let text = '';
    const parser = createParser({
      onEvent: (message) => {
        const data = JSON.parse(message.data) as { type: string; seq: number; patch?: { value: string } };
        expect(data.type).toBe(message.event);
        expect(data.seq).toBe(types.length + 1);
        types.push(data.type);
        if (data.patch) text += data.patch.value;
      },
    });
    const decoder = new TextDecoder();
    for (const chunk of recording.chunks) parser.feed(decoder.decode(chunk, { stream: true }));
    expect(recording.bytes).toBeGreaterThanOrEqual(64 * 1024);
    expect(types).toHaveLength(recording.events);
    expect(types[0]).toBe('message.started');
    expect(types.at(-1)).toBe('message.completed');
    expect(text).toBe(recording.text);
  });

  it('is the same bytes on every run, and batch patches are 256 characters at most', () => {
    const a = recordStream({ bytes: 8 * 1024, patch: 'batch' });
    const b = recordStream({ bytes: 8 * 1024, patch: 'batch' });
    expect(Buffer.concat(a.chunks).equals(Buffer.concat(b.chunks))).toBe(true);
    expect(a.text.length).toBeLessThanOrEqual(256 * (a.events - 2));
  });
});

describe('profile summaries', () => {
  it('names a frame by its package, by its file in the project, or as Node or V8 internals', () => {
    expect(moduleOf('file:///work/main/node_modules/zod/v4/core/core.js')).toBe('zod');
    expect(moduleOf('file:///x/node_modules/@scope/pkg/index.js')).toBe('@scope/pkg');
    expect(moduleOf('node:internal/streams/readable')).toBe('node: internals');
    expect(moduleOf('')).toBe('(native / V8)');
    // The package built for the bench (bench/lib/build.ts), under node_modules/.cache: its chunk.
    expect(moduleOf('file:///w/node_modules/.cache/agent-messaging-bench-1a2b3c4d/dist/chunk-X1.js')).toBe(
      'dist/chunk-X1.js',
    );
  });
});
