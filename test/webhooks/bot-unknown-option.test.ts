import { createBot, ValidationError } from 'agent-messaging';
import { generateWebhookSecret } from 'agent-messaging/testing';
import { describe, expect, it } from 'vitest';

describe('createBot options', () => {
  it('refuses a misspelt option by name instead of ignoring it', () => {
    const secret = generateWebhookSecret();
    let error: unknown;
    try {
      createBot({
        apiKey: 'ams_sk_test',
        webhookSecret: secret,
        baseUrl: 'http://127.0.0.1:9',
        ackTimeout: 1000,
      } as never);
    } catch (caught) {
      error = caught;
    }

    expect(ValidationError.is(error)).toBe(true);
    expect((error as ValidationError).issues.map((issue) => issue.field)).toEqual(['ackTimeout']);
    expect(String((error as Error).message)).not.toContain(secret);
  });

  it("takes every option of its client, maxResponseBytes among them, and refuses a bad one by the client's check", () => {
    const options = {
      apiKey: 'ams_sk_test',
      webhookSecret: generateWebhookSecret(),
      baseUrl: 'http://127.0.0.1:9',
    };
    expect(() => createBot({ ...options, maxResponseBytes: 1024 })).not.toThrow();
    let error: unknown;
    try {
      createBot({ ...options, maxResponseBytes: 0 });
    } catch (caught) {
      error = caught;
    }
    expect((error as ValidationError).issues.map((issue) => issue.field)).toEqual(['maxResponseBytes']);
  });
});
