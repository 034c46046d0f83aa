// Tables for the terminal and for BENCHMARKS.md, and the machine they were measured on.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';

/** One line of a summary table: a figure, the goal it answers, and whether it is met. */
export interface Row {
  measurement: string;
  result: string;
  goal: string;
  /** `info` for a figure that has no goal of its own. */
  status: 'met' | 'NOT MET' | 'info';
}

/** What one measurement (or one soak part) reports: summary rows and markdown detail lines. */
export interface Outcome {
  rows: Row[];
  details: string[];
}

/** The machine, as one markdown line: CPU model, cores, Node version, OS, load when measured. */
export function describeMachine(): string {
  const cpu = cpus();
  const model = cpu[0]?.model.trim() ?? 'unknown CPU';
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');
  const memory = `${Math.round(totalmem() / 2 ** 30)} GiB RAM`;
  return (
    `${model}, ${cpu.length} cores, ${memory}, Node ${process.version}, ${platform()} ${release()}; ` +
    `load average (1/5/15 min) at the start: ${load}; ${new Date().toISOString()}`
  );
}

/** A markdown table from a header row and body rows. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The summary table of rows, in markdown. */
export function summaryTable(rows: readonly Row[]): string {
  return markdownTable(
    ['Measurement', 'Result', 'Goal', 'Status'],
    rows.map((row) => [row.measurement, row.result, row.goal, row.status]),
  );
}

/** The same rows as aligned plain text, for the terminal. */
export function plainTable(rows: readonly Row[]): string {
  const cells = [
    ['Measurement', 'Result', 'Goal', 'Status'],
    ...rows.map((r) => [r.measurement, r.result, r.goal, r.status]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const HEADER = '# Benchmarks and reliability figures\n';

/**
 * Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` in `text` (appending the
 * section when it is not there yet), so the bench and the soak each keep their own part of the file
 * and the hand-written analysis around them survives every run.
 */
export function replaceSection(text: string, name: string, body: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${body.trim()}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1 || to < from) return `${text.trimEnd()}\n\n${block}\n`;
  return text.slice(0, from) + block + text.slice(to + end.length);
}

/** Writes one section of BENCHMARKS.md at `file`, creating the file when it does not exist. */
export function writeSection(file: string, name: string, body: string): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : HEADER;
  writeFileSync(file, replaceSection(text, name, body));
}
