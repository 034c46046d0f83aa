// The page is served by the loopback door only: GET / and its assets under /_mock/ui/.
import { describe, expect, it } from 'vitest';
import { MAX_ADVANCE_SECONDS } from '../../src/schemas/mock-control.js';
import { createMockService } from '../../src/testing/index.js';
import { useMockOverLoopback } from '../mock/stream-helpers.js';

const ctx = useMockOverLoopback();

describe('the emulator page on the loopback server', () => {
  it('answers GET / with the page, which loads only its own assets under a strict policy', async () => {
    const response = await fetch(`${ctx.baseUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    const html = await response.text();
    expect(html).toContain('<script type="module" src="/_mock/ui/app.js"></script>');
    expect(html).not.toMatch(/<script>(?!<)/);
  });

  it('serves every module the page imports, as JavaScript', async () => {
    const seen = new Set<string>();
    const pending = ['/_mock/ui/app.js'];
    while (pending.length > 0) {
      const path = pending.pop() ?? '';
      if (seen.has(path)) continue;
      seen.add(path);
      const response = await fetch(`${ctx.baseUrl}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const source = await response.text();
      // The page builds its DOM from text nodes: no HTML parsing of anything it shows.
      expect(source, path).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
      for (const [, name] of source.matchAll(/from '\.\/([a-z-]+\.js)'/g)) pending.push(`/_mock/ui/${name}`);
    }
    expect([...seen].sort()).toEqual(
      ['activity', 'api', 'app', 'chat', 'dom', 'message', 'sidebar', 'store'].map(
        (n) => `/_mock/ui/${n}.js`,
      ),
    );
    const css = await fetch(`${ctx.baseUrl}/_mock/ui/emulator.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('refuses on the page the same clock advance the mock refuses: more than ten years', async () => {
    const app = await (await fetch(`${ctx.baseUrl}/_mock/ui/app.js`)).text();
    expect(app).toContain(`seconds <= ${MAX_ADVANCE_SECONDS})`);
  });

  it('leaves other methods and unknown assets to the mock', async () => {
    expect((await fetch(`${ctx.baseUrl}/`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${ctx.baseUrl}/_mock/ui/nope.js`)).status).toBe(404);
  });
});

describe('the emulator page elsewhere', () => {
  it('is not part of mock.fetch, so the msw door answers / with 404 as before', async () => {
    const mock = createMockService();
    const response = await mock.fetch('/');
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
