// The API report: every name each package entry exports, with its kind and declared type, read by the
// TypeScript checker from the sources and written to api/<entry>.api.md. test/api/api-report.test.ts
// regenerates it in memory and fails when it differs from the checked-in files, so an export cannot
// appear, vanish or change shape unnoticed. `npm run api-report` rewrites the files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** A package entry: its import specifier, its source and its report file (paths from the repo root). */
export interface ApiEntry {
  specifier: string;
  source: string;
  report: string;
}

/** One exported name as the report records it. */
export interface ApiExport {
  /** The exported name; a member of an exported namespace is `namespace.member`. */
  name: string;
  /** `class`, `function`, `const`, `interface`, `type`, `namespace`, `enum`, joined by `+` when merged. */
  kind: string;
  /** Whether the name exists at run time (a value exported without `export type`). */
  value: boolean;
  /** The declaration as a consumer sees it: signatures, members, the type. */
  text: string;
}

/** The repository root (this file is in scripts/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The package's entries, in package.json "exports" order. */
export const API_ENTRIES: readonly ApiEntry[] = [
  { specifier: 'agent-messaging', source: 'src/index.ts', report: 'api/agent-messaging.api.md' },
  { specifier: 'agent-messaging/testing', source: 'src/testing/index.ts', report: 'api/testing.api.md' },
  {
    specifier: 'agent-messaging/testing/msw',
    source: 'src/testing/msw.ts',
    report: 'api/testing-msw.api.md',
  },
  { specifier: 'agent-messaging/node', source: 'src/node.ts', report: 'api/node.api.md' },
  { specifier: 'agent-messaging/redis', source: 'src/redis/index.ts', report: 'api/redis.api.md' },
  { specifier: 'agent-messaging/chat-sdk', source: 'src/chat-sdk/index.ts', report: 'api/chat-sdk.api.md' },
];

// Whole types, never cut with `...`, an object's members one a line: a change deep in a shape must
// change the report, readably.
const NODE_FLAGS =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.MultilineObjectLiterals |
  ts.NodeBuilderFlags.UseSingleQuotesForStringLiteralType |
  ts.NodeBuilderFlags.IgnoreErrors;

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/**
 * Prints a node the checker built. A type named from another module prints as `import("./x.js").T`;
 * only `T` is kept, so moving a declaration between files does not change the report.
 */
function print(node: ts.Node, file: ts.SourceFile): string {
  return printer
    .printNode(ts.EmitHint.Unspecified, node, file)
    .replace(/import\("([^"]*)"\)\.([\w$]+)/g, (_, from: string, name: string) => {
      if (from.startsWith('.')) referenced.add(name);
      return name;
    })
    .replace(/ {4}/g, '  ');
}

/** Names of the package's own types that printed texts referenced since the last reset. */
const referenced = new Set<string>();

function typeText(checker: ts.TypeChecker, type: ts.Type, file: ts.SourceFile, extra = 0): string {
  const node = checker.typeToTypeNode(type, file, NODE_FLAGS | extra);
  return node ? print(node, file) : checker.typeToString(type, file);
}

/** One signature as a member (`name(...): T;`), a function or a constructor. */
function signatureText(
  checker: ts.TypeChecker,
  signature: ts.Signature,
  file: ts.SourceFile,
  name: string | undefined,
): string {
  const kind = name === undefined ? ts.SyntaxKind.Constructor : ts.SyntaxKind.MethodSignature;
  const node = checker.signatureToSignatureDeclaration(signature, kind, file, NODE_FLAGS);
  if (!node) return checker.signatureToString(signature, file);
  if (name === undefined || !ts.isMethodSignature(node)) return print(node, file);
  const named = ts.factory.updateMethodSignature(
    node,
    node.modifiers,
    ts.factory.createIdentifier(name),
    node.questionToken,
    node.typeParameters,
    node.parameters,
    node.type,
  );
  return print(named, file);
}

/** Whether a file is the package's own source, not a dependency's or TypeScript's lib. */
function isOwnSource(file: ts.SourceFile): boolean {
  return !file.isDeclarationFile && !file.fileName.includes('/node_modules/');
}

/** A program over the entries, with the project's own compiler options. */
function createProgram(root: string): ts.Program {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  const rootNames = API_ENTRIES.map((entry) => join(root, entry.source));
  return ts.createProgram({ rootNames, options: { ...parsed.options, noEmit: true } });
}

/** Whether an alias (an import or export specifier) is type-only along its whole chain. */
function isTypeOnlyAlias(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  let current: ts.Symbol | undefined = symbol;
  while (current && current.flags & ts.SymbolFlags.Alias) {
    for (const declaration of current.declarations ?? []) {
      if (ts.isTypeOnlyImportOrExportDeclaration(declaration)) return true;
    }
    const next: ts.Symbol = checker.getImmediateAliasedSymbol(current) as ts.Symbol;
    if (!next || next === current) break;
    current = next;
  }
  return false;
}

/** Kinds of a resolved symbol, in a fixed order (a name can be a value and a type at once). */
function kindsOf(symbol: ts.Symbol, typeOnly: boolean): string[] {
  const f = typeOnly ? symbol.flags & ~(ts.SymbolFlags.Variable | ts.SymbolFlags.Function) : symbol.flags;
  const kinds: string[] = [];
  if (f & ts.SymbolFlags.Class) kinds.push('class');
  if (f & ts.SymbolFlags.Function) kinds.push('function');
  if (f & ts.SymbolFlags.Variable) kinds.push('const');
  if (f & ts.SymbolFlags.Enum) kinds.push('enum');
  if (f & ts.SymbolFlags.Interface) kinds.push('interface');
  if (f & ts.SymbolFlags.TypeAlias) kinds.push('type');
  if (f & ts.SymbolFlags.ValueModule || f & ts.SymbolFlags.NamespaceModule) kinds.push('namespace');
  return kinds;
}

/**
 * Whether a member is part of the package's surface: declared in its own sources (what a class or an
 * interface inherits from `Error` or another library is that library's, named by `extends`), not
 * private, not an ECMAScript `#` name, not `@internal`.
 */
function isPublicMember(member: ts.Symbol): boolean {
  if (member.name.startsWith('__#') || member.name.startsWith('#')) return false;
  const declarations = member.declarations ?? [];
  if (!declarations.some((declaration) => isOwnSource(declaration.getSourceFile()))) return false;
  return !declarations.some(
    (declaration) =>
      ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Private ||
      (ts.isPropertyDeclaration(declaration) && ts.isPrivateIdentifier(declaration.name)) ||
      ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal'),
  );
}

function modifiersOf(member: ts.Symbol): string {
  const declaration = member.declarations?.[0];
  if (!declaration) return '';
  const flags = ts.getCombinedModifierFlags(declaration);
  let text = '';
  if (flags & ts.ModifierFlags.Protected) text += 'protected ';
  if (flags & ts.ModifierFlags.Readonly || member.flags & ts.SymbolFlags.GetAccessor) {
    if (!(member.flags & ts.SymbolFlags.SetAccessor)) text += 'readonly ';
  }
  return text;
}

/** A member's name as written: `[Symbol.iterator]` rather than the checker's internal `__@iterator@12`. */
function memberName(member: ts.Symbol): string {
  const declared = member.declarations?.[0];
  const name = declared && ts.getNameOfDeclaration(declared);
  if (name && ts.isComputedPropertyName(name)) return `[${name.expression.getText()}]`;
  return /^[A-Za-z_$][\w$]*$/.test(member.name) ? member.name : JSON.stringify(member.name);
}

/** A member's lines: one per call signature for a method, else `name?: type;`. */
function memberLines(checker: ts.TypeChecker, member: ts.Symbol, file: ts.SourceFile, prefix = ''): string[] {
  const name = memberName(member);
  const type = checker.getTypeOfSymbolAtLocation(member, file);
  const head = `${prefix}${modifiersOf(member)}`;
  if (member.flags & ts.SymbolFlags.Method) {
    const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
    return type
      .getCallSignatures()
      .map((signature) => head + signatureText(checker, signature, file, name + optional));
  }
  const optional = member.flags & ts.SymbolFlags.Optional ? '?' : '';
  return [`${head}${name}${optional}: ${typeText(checker, type, file)};`];
}

/** Call, construct and index signatures of an interface. */
function signatureLines(checker: ts.TypeChecker, type: ts.Type, file: ts.SourceFile): string[] {
  const lines: string[] = [];
  for (const signature of type.getCallSignatures()) lines.push(signatureText(checker, signature, file, ''));
  for (const signature of type.getConstructSignatures()) {
    lines.push(`new ${signatureText(checker, signature, file, '')}`);
  }
  for (const info of checker.getIndexInfosOfType(type)) {
    const key = typeText(checker, info.keyType, file);
    const readonly = info.isReadonly ? 'readonly ' : '';
    lines.push(`${readonly}[key: ${key}]: ${typeText(checker, info.type, file)};`);
  }
  return lines;
}

function typeParametersOf(checker: ts.TypeChecker, symbol: ts.Symbol, file: ts.SourceFile): string {
  const declaration = symbol.declarations?.find(
    (d) => ts.isClassDeclaration(d) || ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d),
  ) as ts.ClassDeclaration | ts.InterfaceDeclaration | ts.TypeAliasDeclaration | undefined;
  const parameters = declaration?.typeParameters;
  if (!parameters?.length) return '';
  const printed = parameters.map((parameter) => {
    const type = checker.getTypeAtLocation(parameter) as ts.TypeParameter;
    const constraint = checker.getBaseConstraintOfType(type);
    const defaultType = type.getDefault();
    let text = parameter.name.text;
    if (parameter.constraint && constraint) text += ` extends ${typeText(checker, constraint, file)}`;
    if (defaultType) text += ` = ${typeText(checker, defaultType, file)}`;
    return text;
  });
  return `<${printed.join(', ')}>`;
}

function block(head: string, entries: string[]): string {
  if (!entries.length) return `${head} {}`;
  const body = entries.flatMap((entry) => entry.split('\n')).map((line) => `  ${line}`);
  return `${head} {\n${body.join('\n')}\n}`;
}

/**
 * ` extends A, B` of a class or an interface. A base's own public members are listed as the type's
 * own, so an unexported base (a shared implementation) leaves nothing a user would need to name.
 */
function basesOf(checker: ts.TypeChecker, type: ts.Type, file: ts.SourceFile): string {
  if (
    !(type.flags & ts.TypeFlags.Object) ||
    !((type as ts.ObjectType).objectFlags & ts.ObjectFlags.ClassOrInterface)
  ) {
    return '';
  }
  const named = new Set(referenced);
  const bases = checker.getBaseTypes(type as ts.InterfaceType).map((base) => typeText(checker, base, file));
  for (const name of [...referenced]) if (!named.has(name)) referenced.delete(name);
  return bases.length ? ` extends ${bases.join(', ')}` : '';
}

/** The text of one resolved symbol under one exported name, one part per kind. */
function describe(
  checker: ts.TypeChecker,
  name: string,
  symbol: ts.Symbol,
  file: ts.SourceFile,
  typeOnly: boolean,
): string[] {
  const parts: string[] = [];
  // Under `export type`, a merged const or function is not reachable: only its type side is API.
  const f = typeOnly ? symbol.flags & ~(ts.SymbolFlags.Variable | ts.SymbolFlags.Function) : symbol.flags;
  const generics = typeParametersOf(checker, symbol, file);
  if (f & ts.SymbolFlags.Class) {
    const instance = checker.getDeclaredTypeOfSymbol(symbol) as ts.InterfaceType;
    const statics = checker.getTypeOfSymbol(symbol);
    const lines: string[] = [];
    // A class exported as a type only cannot be constructed or reached at run time: its instances are the API.
    const constructors = typeOnly ? [] : statics.getConstructSignatures();
    for (const signature of constructors) lines.push(signatureText(checker, signature, file, undefined));
    for (const member of typeOnly ? [] : checker.getPropertiesOfType(statics)) {
      if (member.name === 'prototype' || !isPublicMember(member)) continue;
      lines.push(...memberLines(checker, member, file, 'static '));
    }
    for (const member of checker.getPropertiesOfType(instance)) {
      if (isPublicMember(member)) lines.push(...memberLines(checker, member, file));
    }
    parts.push(block(`class ${name}${generics}${basesOf(checker, instance, file)}`, lines));
  }
  if (f & ts.SymbolFlags.Function) {
    for (const signature of checker.getTypeOfSymbol(symbol).getCallSignatures()) {
      parts.push(`function ${signatureText(checker, signature, file, name)}`);
    }
  }
  if (f & ts.SymbolFlags.Variable) {
    parts.push(`const ${name}: ${typeText(checker, checker.getTypeOfSymbol(symbol), file)};`);
  }
  if (f & ts.SymbolFlags.Enum) {
    const members = checker.getExportsOfModule(symbol).map((member) => {
      const declaration = member.valueDeclaration as ts.EnumMember | undefined;
      const value = declaration ? checker.getConstantValue(declaration) : undefined;
      return `${member.name} = ${JSON.stringify(value)},`;
    });
    parts.push(block(`enum ${name}`, members));
  }
  if (f & ts.SymbolFlags.Interface) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    const lines = signatureLines(checker, type, file);
    const heritage = basesOf(checker, type, file);
    for (const member of checker.getPropertiesOfType(type)) {
      if (isPublicMember(member)) lines.push(...memberLines(checker, member, file));
    }
    parts.push(block(`interface ${name}${generics}${heritage}`, lines));
  }
  if (f & ts.SymbolFlags.TypeAlias) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    const text = typeText(checker, type, file, ts.NodeBuilderFlags.InTypeAlias);
    parts.push(`type ${name}${generics} = ${text};`);
  }
  return parts;
}

/** Every name one entry exports, members of exported namespaces included, sorted by name. */
function exportsOf(checker: ts.TypeChecker, file: ts.SourceFile): ApiExport[] {
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) return [];
  const found: ApiExport[] = [];
  const visit = (exported: ts.Symbol, name: string, typeOnly: boolean): void => {
    const resolved = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const only = typeOnly || isTypeOnlyAlias(checker, exported);
    const kinds = kindsOf(resolved, only);
    const value = !only && (resolved.flags & ts.SymbolFlags.Value) !== 0;
    const isNamespace =
      kinds.includes('namespace') && !(resolved.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Function));
    if (isNamespace) {
      found.push({ name, kind: 'namespace', value, text: `namespace ${name}` });
      for (const member of checker.getExportsOfModule(resolved))
        visit(member, `${name}.${member.name}`, only);
      return;
    }
    const text = describe(checker, name.slice(name.lastIndexOf('.') + 1), resolved, file, only).join('\n');
    found.push({ name, kind: kinds.join('+'), value, text });
  };
  // `export type * from` re-exports a module's names as types only; the checker resolves them to the
  // module's own symbols, so the names it brings are collected here.
  const typeOnlyStar = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.isTypeOnly || statement.exportClause) continue;
    const target = statement.moduleSpecifier && checker.getSymbolAtLocation(statement.moduleSpecifier);
    for (const exported of target ? checker.getExportsOfModule(target) : []) typeOnlyStar.add(exported.name);
  }
  for (const exported of checker.getExportsOfModule(moduleSymbol))
    visit(exported, exported.name, typeOnlyStar.has(exported.name));
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What one entry offers: its exports, and the package's own types they use that it does not export. */
export interface EntryApi {
  exports: ApiExport[];
  /** Types named in the exports' declarations that no entry exports (a user cannot name them). */
  unexported: string[];
}

/** The API of every entry, read from the sources under `root`. */
export function readApi(root: string = ROOT): Map<ApiEntry, EntryApi> {
  const program = createProgram(root);
  const checker = program.getTypeChecker();
  const read = API_ENTRIES.map((entry) => {
    const file = program.getSourceFile(join(root, entry.source));
    if (!file) throw new Error(`${entry.source} is not in the program`);
    referenced.clear();
    const exports = exportsOf(checker, file);
    return { entry, exports, used: [...referenced] };
  });
  // A type another entry exports can be named by a user (the bot's types in the Chat SDK adapter).
  const exported = new Set(read.flatMap(({ exports }) => exports.map((e) => e.name.replace(/^.*\./, ''))));
  return new Map(
    read.map(({ entry, exports, used }) => [
      entry,
      { exports, unexported: used.filter((name) => !exported.has(name)).sort() },
    ]),
  );
}

/** The report file of one entry. */
export function renderReport(entry: ApiEntry, { exports, unexported }: EntryApi): string {
  const values = exports.filter((e) => e.value).length;
  const lines = [
    `# API report: \`${entry.specifier}\``,
    '',
    `Generated from \`${entry.source}\` by \`npm run api-report\`; test/api/api-report.test.ts fails when`,
    `this file is out of date. ${exports.length} names, ${values} of them runtime values.`,
    '',
    `Types the declarations below use that no entry exports: ${unexported.length ? unexported.map((n) => `\`${n}\``).join(', ') : 'none'}.`,
    '',
  ];
  for (const e of exports) {
    lines.push(
      `## ${e.name}`,
      '',
      `${e.kind}${e.value ? ', value' : ', type only'}`,
      '',
      '```ts',
      e.text,
      '```',
      '',
    );
  }
  return lines.join('\n');
}

/** Splits a report into its header (key `''`) and one section per exported name, for a comparison by name. */
export function sectionsOf(report: string): Map<string, string> {
  const [header = '', ...chunks] = report.split(/^## /m);
  const sections = new Map<string, string>([['', header.trim()]]);
  for (const chunk of chunks) {
    const newline = chunk.indexOf('\n');
    sections.set(chunk.slice(0, newline), chunk.slice(newline + 1).trim());
  }
  return sections;
}

/** Writes every entry's report under `root`. */
export function writeReports(root: string = ROOT): void {
  for (const [entry, api] of readApi(root)) {
    const path = join(root, entry.report);
    mkdirSync(dirname(path), { recursive: true });
    const text = renderReport(entry, api);
    const old = existsSync(path) ? readFileSync(path, 'utf8') : '';
    if (old !== text) writeFileSync(path, text);
    console.log(`${entry.report}: ${api.exports.length} names${old === text ? '' : ', rewritten'}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) writeReports();
