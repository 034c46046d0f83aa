// The import graph of src/, read with the TypeScript compiler's parser (no type checking, so it stays
// fast): no cycle between folders, counting dynamic imports and type-only imports, and no cycle of
// value imports between files outside src/testing/. A cycle makes the order in which modules run
// depend on which one is imported first, and a folder cycle means two ideas that cannot be read apart.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

interface Edge {
  to: string;
  /** Only types cross it: erased at build time. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the source), or undefined for a package. */
function target(from: string, specifier: string, files: Set<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier).replace(/\.js$/, '');
  const found = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((path) => files.has(path));
  if (found === undefined)
    throw new Error(`${relative(SRC, from)} imports ${specifier}, which is not in src/`);
  return found;
}

/** Every import of one file: declarations, re-exports and `import()` calls; `typeof import()` is a type. */
function importsOf(file: string, files: Set<string>): Edge[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const edges: Edge[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (specifier === undefined || !ts.isStringLiteral(specifier)) return;
    const to = target(file, specifier.text, files);
    if (to !== undefined) edges.push({ to, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      // `import { type A, type B }` brings no value either; a bare `import './x.js'` runs the file.
      const onlyTypes =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            bindings !== undefined &&
            ts.isNamedImports(bindings) &&
            bindings.elements.length > 0 &&
            bindings.elements.every((element) => element.isTypeOnly)));
      add(node.moduleSpecifier, onlyTypes);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      const onlyTypes =
        node.isTypeOnly ||
        (clause !== undefined &&
          ts.isNamedExports(clause) &&
          clause.elements.length > 0 &&
          clause.elements.every((element) => element.isTypeOnly));
      add(node.moduleSpecifier, onlyTypes);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument)) add(argument.literal as ts.Expression, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** The first cycle found in `graph`, as the list of its nodes with the first repeated at the end. */
function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

const files = sourceFiles(SRC);
const known = new Set(files);
const edges = new Map(files.map((file) => [file, importsOf(file, known)]));
const name = (file: string) => relative(SRC, file);
/** A file's folder under src/ (`streaming`), or the file itself for one at the top (`index.ts`). */
const folderOf = (file: string) => name(file).split('/')[0] as string;

describe('the import graph of src/', () => {
  it('has no cycle between folders, counting dynamic and type-only imports', () => {
    const graph = new Map<string, Set<string>>();
    for (const [file, list] of edges) {
      for (const { to } of list) {
        const [from, into] = [folderOf(file), folderOf(to)];
        if (from === into) continue;
        if (!graph.has(from)) graph.set(from, new Set());
        graph.get(from)?.add(into);
      }
    }
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined();
  });

  it('has no cycle of value imports between files outside src/testing/', () => {
    const graph = new Map<string, Set<string>>();
    for (const [file, list] of edges) {
      if (name(file).startsWith('testing/')) continue;
      const values = list.filter(({ to, typeOnly }) => !typeOnly && !name(to).startsWith('testing/'));
      graph.set(name(file), new Set(values.map(({ to }) => name(to))));
    }
    expect(findCycle(graph)?.join(' -> ')).toBeUndefined();
  });

  it('finds the imports it checks (a parse that found none would pass anything)', () => {
    const agentClient = edges.get(join(SRC, 'client/agent-client.ts')) ?? [];
    expect(agentClient.map(({ to }) => name(to))).toContain('resources/messages.ts');
    expect(
      findCycle(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['a'])],
        ]),
      ),
    ).toEqual(['a', 'b', 'a']);
  });
});
