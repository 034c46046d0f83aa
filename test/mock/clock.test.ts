// The mock clock's bounds and its reset: an advance of any size must never leave the clock an invalid
// date (every timestamp, GET /_mock/state included, would fail from then on), and reset() returns
// the clock to where a new mock starts.
import { createMockService, mockSchemas } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { DOORS, useDoor } from './doors.js';
import { errorOf, parse } from './helpers.js';

// The wire schemas as values, from the public namespace.
const { MockStateSnapshot } = mockSchemas;

/** Ten years of 365.25 days: the most one advance may move the clock. */
const TEN_YEARS_S = 10 * 365.25 * 86_400;
const HOUR_MS = 3_600_000;
const ClockAnswer = z.object({ now: z.string() });

describe.each(DOORS)('the clock through the %s door', (door) => {
  const { call } = useDoor(door);

  const clockNow = async () => Date.parse(parse(ClockAnswer, (await call('GET', '/_mock/clock')).body).now);

  it('refuses an advance of more than ten years with 400 naming seconds, and keeps its time', async () => {
    for (const seconds of [1e308, TEN_YEARS_S + 1]) {
      const before = await clockNow();
      const refused = await call('POST', '/_mock/clock/advance', { body: { seconds } });
      expect(refused.status).toBe(400);
      expect(errorOf(refused)).toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/^seconds: /),
      });
      expect((await clockNow()) - before).toBeLessThan(HOUR_MS);
    }
    const state = await call('GET', '/_mock/state');
    expect(state.status).toBe(200);
    expect(Date.parse(parse(MockStateSnapshot, state.body).now) - Date.now()).toBeLessThan(HOUR_MS);
  });

  it('advances by exactly ten years, and reset over HTTP brings the clock back to real time', async () => {
    const before = await clockNow();
    const advanced = await call('POST', '/_mock/clock/advance', { body: { seconds: TEN_YEARS_S } });
    expect(advanced.status).toBe(200);
    expect(Date.parse(parse(ClockAnswer, advanced.body).now) - before).toBeGreaterThanOrEqual(
      TEN_YEARS_S * 1000,
    );
    expect((await call('POST', '/_mock/reset')).status).toBe(200);
    expect(Math.abs((await clockNow()) - Date.now())).toBeLessThan(HOUR_MS);
    const state = parse(MockStateSnapshot, (await call('GET', '/_mock/state')).body);
    expect(Math.abs(Date.parse(state.now) - Date.now())).toBeLessThan(HOUR_MS);
  });
});

describe('the clock in process', () => {
  it('refuses advance() beyond ten years with a RangeError naming seconds, and keeps its time', async () => {
    const mock = createMockService();
    for (const seconds of [1e308, TEN_YEARS_S + 1, Number.POSITIVE_INFINITY, Number.NaN]) {
      await expect(mock.clock.advance(seconds)).rejects.toThrow(RangeError);
      await expect(mock.clock.advance(seconds)).rejects.toThrow(/^seconds: /);
    }
    expect(Math.abs(mock.clock.now().getTime() - Date.now())).toBeLessThan(HOUR_MS);
  });

  it('refuses an advance that would carry the clock past the year 9999, in process and over HTTP', async () => {
    const mock = createMockService({ now: '9999-06-01T00:00:00.000Z' });
    await expect(mock.clock.advance(365 * 86_400)).rejects.toThrow(/^seconds: .*9999/);
    const refused = await mock.fetch('/_mock/clock/advance', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 365 * 86_400 }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/^seconds: /);
    expect(mock.clock.now().toISOString()).toMatch(/^9999-06-01T/);
    expect((await mock.fetch('/_mock/state')).status).toBe(200);
  });

  it('undoes every advance on reset(), so the clock reads real time again', async () => {
    const mock = createMockService();
    await mock.clock.advance(3600);
    expect(mock.clock.now().getTime() - Date.now()).toBeGreaterThan(HOUR_MS / 2);
    mock.reset();
    expect(Math.abs(mock.clock.now().getTime() - Date.now())).toBeLessThan(HOUR_MS / 2);
  });

  it('returns a clock started at the `now` option to that start on reset()', async () => {
    const start = Date.parse('2030-01-01T00:00:00.000Z');
    const mock = createMockService({ now: start });
    await mock.clock.advance(7 * 86_400);
    mock.reset();
    expect(mock.clock.now().getTime()).toBeGreaterThanOrEqual(start);
    expect(mock.clock.now().getTime()).toBeLessThan(start + HOUR_MS);
  });

  it('refuses a `now` option that is not a date between the years 0 and 9999, naming now', () => {
    for (const now of ['not a date', Number.NaN, 8.64e15 + 1, '+010000-01-01T00:00:00.000Z']) {
      expect(() => createMockService({ now })).toThrow(/^now: /);
    }
  });
});
