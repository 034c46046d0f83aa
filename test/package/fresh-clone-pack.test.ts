// `npm pack` on a fresh clone (no dist/ yet) builds the package first, so the tarball holds the
// entries package.json exports.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it, onTestFinished } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

it('npm pack on a fresh clone ships dist/ with every exported entry', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ams-pack-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  // A fresh clone: the committed files, and the dependencies already installed.
  execFileSync('git', ['archive', '--format=tar', '-o', join(dir, 'clone.tar'), 'HEAD'], { cwd: root });
  execFileSync('tar', ['-xf', 'clone.tar'], { cwd: dir });
  await rm(join(dir, 'clone.tar'));
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));

  execFileSync('npm', ['pack', '--silent'], { cwd: dir, stdio: 'ignore' });
  const tarball = execFileSync('sh', ['-c', 'ls *.tgz'], { cwd: dir, encoding: 'utf8' }).trim();
  const files = execFileSync('tar', ['-tzf', tarball], { cwd: dir, encoding: 'utf8' }).split('\n');

  for (const entry of ['index', 'testing/index', 'testing/msw', 'node', 'redis/index', 'chat-sdk/index']) {
    expect(files).toContain(`package/dist/${entry}.js`);
    expect(files).toContain(`package/dist/${entry}.d.ts`);
  }
  expect(files).toContain('package/dist/cli.js');
}, 600_000);
