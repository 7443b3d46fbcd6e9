import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listen } from '../src/lib/listen.ts';
import { testDatabase } from './helpers.ts';
import { until } from './ws-client.ts';

/**
 * The one LISTEN mechanism (src/lib/listen.ts): a registration lost without the connection
 * dropping (what a pooler or an UNLISTEN does) is found by its heartbeat and made again, so a
 * process never goes on hearing nothing without a word.
 */
let db: Awaited<ReturnType<typeof testDatabase>>;

beforeAll(async () => {
  db = await testDatabase();
});
afterAll(async () => {
  await db.drop();
});

it('finds a lost registration within a heartbeat and listens again', async () => {
  const heard: string[] = [];
  let again = 0;
  const listening = await listen({
    databaseUrl: db.url,
    channel: 'listen_test',
    name: 'clinic-gateway listen test',
    heartbeatMs: 100,
    onNotify: (p) => heard.push(p ?? ''),
    onListening: (_c, reconnected) => {
      if (reconnected) again++;
    },
  });
  const notifier = new pg.Client({ connectionString: db.url });
  await notifier.connect();
  try {
    await notifier.query("select pg_notify('listen_test', 'one')");
    await until(() => heard.includes('one'));
    // Lost without a word: the connection is up, the registration gone.
    await listening.client?.query('unlisten *');
    await until(() => again === 1, 5000);
    await notifier.query("select pg_notify('listen_test', 'two')");
    await until(() => heard.includes('two'), 5000);
  } finally {
    await notifier.end();
    await listening.close();
  }
});
