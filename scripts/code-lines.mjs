// Code lines of src/ as issue 22 counts them: lines holding a token of code, so no comment (JSDoc or
// other), no blank line. Each file is parsed by TypeScript and its tokens walked, so a template literal
// or a regex never hides a comment from the count. `node scripts/code-lines.mjs [dir] [-f]` (-f: per file).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = process.argv[2] ?? 'src';
const perFile = {};

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.tsx?$/.test(name)) perFile[path] = codeLines(path);
  }
}

function codeLines(path) {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const lines = new Set();
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(file);
    if (children.length > 0) return children.forEach(visit);
    const start = node.getStart(file);
    if (node.kind === ts.SyntaxKind.EndOfFileToken || node.getEnd() <= start) return;
    const first = file.getLineAndCharacterOfPosition(start).line;
    const last = file.getLineAndCharacterOfPosition(node.getEnd() - 1).line;
    for (let line = first; line <= last; line++) lines.add(line);
  };
  visit(file);
  return lines.size;
}

walk(root);
const byFolder = {};
for (const [path, n] of Object.entries(perFile)) {
  const folder = path.split('/').slice(0, 2).join('/');
  byFolder[folder] = (byFolder[folder] ?? 0) + n;
}
if (process.argv.includes('-f'))
  for (const [path, n] of Object.entries(perFile).sort((a, b) => a[1] - b[1])) console.log(n, path);
for (const [folder, n] of Object.entries(byFolder).sort((a, b) => b[1] - a[1])) console.log(n, folder);
const total = Object.values(perFile).reduce((a, b) => a + b, 0);
console.log(`total ${total} code lines in ${Object.keys(perFile).length} files`);
