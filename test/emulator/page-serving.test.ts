// The page is served by the loopback door only: GET / and its assets under /_mock/ui/.
import { createMockService } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
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

  it('serves the page as one bundled script and its stylesheet', async () => {
    const response = await fetch(`${ctx.baseUrl}/_mock/ui/app.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const source = await response.text();
    // Every import is resolved into the bundle: the browser asks for nothing else.
    expect(source).not.toMatch(/^\s*import\s/m);
    // The page builds its DOM from text nodes: no HTML parsing of anything it shows.
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    const css = await fetch(`${ctx.baseUrl}/_mock/ui/emulator.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain('.quick-replies');
  });

  it("holds the mock's own clock cap and event types, and no schema library", async () => {
    const app = await (await fetch(`${ctx.baseUrl}/_mock/ui/app.js`)).text();
    // esbuild marks where each bundled module starts: the cap comes from the mock's module.
    expect(app).toContain('// src/schemas/mock-limits.ts');
    expect(app).not.toContain('zod');
    expect(app.length).toBeLessThan(60_000);
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
