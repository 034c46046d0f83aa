// The adapter's declared types hold for a Chat SDK user whose tsconfig has
// `exactOptionalPropertyTypes`: the class still implements Chat SDK's Adapter under that flag.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('src/chat-sdk type-checks with exactOptionalPropertyTypes', () => {
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.json`,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: () => {},
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram([`${root}src/chat-sdk/index.ts`], {
    ...config.options,
    exactOptionalPropertyTypes: true,
  });
  // What the package's chat-sdk entry declares; the rest of src is checked by its own settings.
  const errors = program
    .getSourceFiles()
    .filter((file) => file.fileName.startsWith(`${root}src/chat-sdk/`))
    .flatMap((file) => program.getSemanticDiagnostics(file))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(errors).toEqual([]);
}, 60_000);
