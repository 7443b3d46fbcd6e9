import { describe, expect, it } from 'vitest';
import { listenAndForward } from '../src/cli/events-listen.ts';

/**
 * `events listen --types` takes the REST event types (what deliveries and GET /v1/events carry);
 * the subscription takes GraphQL's enum names. A type outside the catalog is refused before any
 * connection, naming it, instead of a GraphQL variable error about an enum value the user never typed.
 */
describe('events listen --types', () => {
  const base = {
    url: 'http://127.0.0.1:9',
    key: 'k',
    forwardTo: 'http://127.0.0.1:9/hooks',
    secret: 'whsec_x',
  };

  it('refuses a type outside the catalog, naming it and the known ones', () => {
    let thrown: any;
    try {
      listenAndForward({ ...base, types: ['patient.created', 'patient.nope'], print: () => {} });
    } catch (e) {
      thrown = e;
    }
    expect(thrown?.code).toBe('validation_failed');
    expect(thrown?.message).toContain("'patient.nope'");
    expect(thrown?.message).not.toContain("'patient.created'");
    expect(thrown?.message).toContain('chat.message.sent');
  });
});
