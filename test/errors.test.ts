import { GraphQLError } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError, INTERNAL_MESSAGE, toAppError } from '../src/lib/errors.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** One error type, mapped once per transport: what is the client's fault and what is ours. */
describe('toAppError', () => {
  it('keeps AppErrors, wrapped or not', () => {
    const e = new AppError('not_found', 'No patient.');
    expect(toAppError(new GraphQLError('x', { originalError: e }))).toBe(e);
  });

  it('reads document and request errors as invalid_request', () => {
    expect(toAppError(new GraphQLError('Syntax Error: Unexpected Name "x".')).code).toBe('invalid_request');
    expect(toAppError(new GraphQLError('Bad body', { extensions: { http: { status: 400 } } })).code).toBe(
      'invalid_request',
    );
  });

  it('masks execution errors of ours, even without an original error', () => {
    const nonNull = new GraphQLError('Cannot return null for non-nullable field Patient.id.', {
      path: ['patient', 'id'],
    });
    expect(toAppError(nonNull)).toMatchObject({ code: 'internal_error', message: INTERNAL_MESSAGE });
    expect(toAppError(new TypeError('boom'))).toMatchObject({ code: 'internal_error', status: 500 });
  });
});

describe('GraphQL request errors keep their HTTP status', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });

  it('an unknown path that is a near miss of a route names it ("did you mean"); a far one does not', async () => {
    const message = async (path: string, method = 'GET') => {
      const r = await app.send(method, path, undefined, null);
      expect(r.status, path).toBe(404);
      expect(r.body.error.code).toBe('not_found');
      return r.body.error.message as string;
    };
    expect(await message('/v1/patient')).toBe(
      'No route GET /v1/patient. Did you mean /v1/patients (GET, POST)?',
    );
    // The request's own ids stand in the route's parameters.
    expect(await message('/v1/patients/pat_7/appointment')).toMatch(
      /Did you mean \/v1\/patients\/pat_7\/appointments \(GET\)\?$/,
    );
    expect(await message('/v1/chat/conversation/conv_2/messages')).toMatch(
      /Did you mean \/v1\/chat\/conversations\/conv_2\/messages \(GET\)\?$/,
    );
    expect(await message('/v1/webhook/wh_1/test', 'POST')).toMatch(
      /Did you mean \/v1\/webhooks\/wh_1\/test \(POST\)\?$/,
    );
    // A route without its /v1.
    expect(await message('/appointments')).toMatch(
      /under \/v1 and \/graphql\. Did you mean \/v1\/appointments \(GET, POST\)\?$/,
    );
    // Nothing near: no guess, and no guess worked out over a long path.
    expect(await message('/v1/inventory')).toBe('No route GET /v1/inventory.');
    expect(await message('/v1/patients/pat_1/x/y')).not.toMatch(/Did you mean/);
    expect(await message(`/v1/patient${'s'.repeat(300)}`)).not.toMatch(/Did you mean/);
  });

  it('PUT /graphql is a 405 that names the allowed methods', async () => {
    const res = await fetch(`${app.url}/graphql`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toMatch(/POST/);
  });
});
