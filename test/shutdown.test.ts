import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** Closing the server lets requests in flight finish, and does not wait for idle keep-alives. */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.clinicWithKey('dental', readScopes)).key;
});

describe('graceful shutdown', () => {
  it('answers a request in flight, refuses new connections, and closes promptly', async () => {
    // An idle keep-alive connection from an earlier request.
    expect(
      (await fetch(`${app.url}/v1/patients`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).toBe(200);

    const { port } = new URL(app.url);
    const body = JSON.stringify({ query: '{ patients(first: 1) { edges { node { id } } } }' });
    const socket = connect(Number(port), '127.0.0.1');
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d) => {
        text += d;
      });
      socket.on('close', () => resolve(text));
    });
    await new Promise((r) => socket.once('connect', r));
    // Headers and half the body: the request is in flight when the server starts closing.
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const closed = app.server.close();
    await new Promise((r) => setTimeout(r, 100));
    await expect(fetch(`${app.url}/health`)).rejects.toThrow();
    socket.write(body.slice(10));
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/"patients"/);
    await closed;
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
