// Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): where the samples' self time went, by
// function and by module, so BENCHMARKS.md can say where the time of a missed goal goes.
import { readFileSync } from 'node:fs';
import { ROOT } from './child.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** The parts of a V8 CPU profile the summary reads. */
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** One frame or module with its share of all samples. */
export interface Hot {
  name: string;
  share: number;
}

/** Where a path points: `src/...`, a package name, or `node:` internals. */
export function moduleOf(url: string): string {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return 'node: internals';
  const path = decodeURI(url.replace(/^file:\/\//, ''));
  // The package as bench/lib/build.ts builds it: its chunks, named by file (functions keep their names).
  const built = path.match(/\/\.cache\/agent-messaging-bench-[^/]+\/dist\/(.+)$/);
  if (built) return `dist/${built[1]}`;
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules !== -1) {
    const rest = path.slice(inModules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

/** The top frames by self time and the modules by self time, each as a share of all samples. */
export function summarizeProfile(file: string, top = 12): { frames: Hot[]; modules: Hot[] } {
  return summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, top);
}

/** The same summary of a profile already in memory (from `node:inspector`). */
export function summarize(profile: Profile, top = 12): { frames: Hot[]; modules: Hot[] } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map<number, number>();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const frames = new Map<string, number>();
  const modules = new Map<string, number>();
  for (const [id, count] of counts) {
    const frame = byId.get(id)!.callFrame;
    const where = moduleOf(frame.url);
    // No line numbers: under tsx they point into the transpiled text, not the source.
    const name = `${frame.functionName || '(anonymous)'} (${where})`;
    frames.set(name, (frames.get(name) ?? 0) + count);
    modules.set(where, (modules.get(where) ?? 0) + count);
  }
  const ranked = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => ({ name, share: count / total }));
  return { frames: ranked(frames), modules: ranked(modules) };
}
