import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The pages answer their errors as every route does (src/server/send-error.ts): the JSON error
 * body with its code, request id and doc_url, never a text of their own. Without Chromium: these
 * are plain HTTP answers.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

async function errorOf(path: string, init: RequestInit = {}) {
  const r = await fetch(`${app.url}${path}`, init);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = await r.json();
  expect(body.error.request_id).toBe(r.headers.get('x-request-id'));
  return {
    status: r.status,
    allow: r.headers.get('allow'),
    code: body.error.code,
    docUrl: body.error.doc_url,
  };
}

describe('the pages’ errors', () => {
  it('/inbox and /webhooks answer another method with the JSON 405 and Allow', async () => {
    for (const path of [
      '/inbox',
      '/inbox/',
      '/inbox/assets/inbox.0000000000000000.js',
      '/webhooks',
      '/webhooks/',
      '/webhooks/assets/portal.0000000000000000.js',
    ])
      expect(await errorOf(path, { method: 'POST' }), path).toEqual({
        status: 405,
        allow: 'GET, HEAD',
        code: 'method_not_allowed',
        docUrl: '/errors#method_not_allowed',
      });
  });

  it('POST /webhooks (the API call with /v1 forgotten) says where the API is', async () => {
    const res = await fetch(`${app.url}/webhooks`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect((await res.json()).error.message).toBe(
      'POST is not allowed on /webhooks; use GET, HEAD. Did you mean /v1/webhooks (GET, POST)?',
    );
  });

  it('an unknown hashed file of the inbox, the portal or the console is the JSON 404', async () => {
    for (const path of [
      '/inbox/assets/inbox.0000000000000000.js',
      '/webhooks/assets/portal.0000000000000000.js',
      '/graphql/assets/graphiql.0000000000000000.js',
    ])
      expect(await errorOf(path), path).toMatchObject({
        status: 404,
        code: 'not_found',
        docUrl: '/errors#not_found',
      });
  });
});
