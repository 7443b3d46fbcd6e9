import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openOrm } from '../src/db/orm.ts';
import { listen } from '../src/lib/listen.ts';
import { EventHub } from '../src/services/events/hub.ts';
import { startEventRelay } from '../src/services/events/relay.ts';
import { testDatabase } from './helpers.ts';
import { until as untilValue } from './until.ts';
import { until } from './ws-client.ts';

/**
 * The one LISTEN mechanism (src/lib/listen.ts): a registration lost without the connection
 * dropping (what a pooler or an UNLISTEN does) is found by its heartbeat and made again, so a
 * process never goes on hearing nothing without a word. A relay whose start fails lets its
 * connection go.
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

it('a relay whose start fails after its LISTEN keeps no connection open', async () => {
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const orm = await openOrm(db.url);
  const relayConnections = async () =>
    Number(
      (
        await admin.query(
          `select count(*) as n from pg_stat_activity where application_name = 'clinic-gateway events leak-test'`,
        )
      ).rows[0].n,
    );
  try {
    // Its first read (the newest settled event) fails: no event table.
    await admin.query('alter table "event" rename to "event_away"');
    await expect(
      startEventRelay({ databaseUrl: db.url, em: orm.em, hub: new EventHub(), tag: 'leak-test' }),
    ).rejects.toThrow(/event/);
    await untilValue(relayConnections, (n) => n === 0, 3000);
  } finally {
    await admin.query('alter table "event_away" rename to "event"');
    await admin.end();
    await orm.close();
  }
});
