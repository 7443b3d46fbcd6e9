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
