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
});
