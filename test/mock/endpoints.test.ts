// The endpoint table is the one source of method, path, caller and retry class: the mock's routes are
// made from it, one per key, so the client and the mock cannot drift apart.
import { describe, expect, test } from 'vitest';
// Private: the endpoint table and the mock's routes are what this test compares.
import { endpoints } from '../../src/endpoints.js';
import { serviceRoutes } from '../../src/testing/service.js';

describe('the endpoint table', () => {
  test('every endpoint has exactly one mock rule, and every rule of the service has an endpoint', () => {
    const keys = serviceRoutes.map((route) => route.key);

    expect([...keys].sort()).toEqual(Object.keys(endpoints).sort());
    expect(new Set(keys).size).toBe(keys.length);
  });

  test("each rule answers at its endpoint's method and path, with its caller kind and retry class", () => {
    for (const route of serviceRoutes) {
      const entry = endpoints[route.key as keyof typeof endpoints];
      expect({
        key: route.key,
        method: route.method,
        path: route.path,
        auth: route.auth,
        retry: route.retry,
      }).toEqual({
        key: route.key,
        method: entry.method,
        path: entry.path,
        auth: entry.caller,
        retry: entry.retry,
      });
    }
  });

  test('only the calls the service deduplicates by their key are keyed', () => {
    const keyed = Object.entries(endpoints)
      .filter(([, entry]) => entry.retry === 'keyed')
      .map(([key]) => key);

    expect(keyed.sort()).toEqual(['conversations.createDirect', 'groups.invite', 'messages.send']);
  });
});
