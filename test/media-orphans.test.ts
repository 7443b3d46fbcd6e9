import { beforeAll, expect, it } from 'vitest';
import { pgMediaStore } from '../src/media/store.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The media sweep (src/media/orphans.ts): a stored file that no message or call of its clinic
 * refers to is deleted once it is older than a day; a referred one, or a recent one, stays.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ workers: false });
});

const sql = (text: string, params: unknown[] = []) => app.orm.em.getConnection().execute(text, params);
const idOf = (key: string) => Number(key.replace('med_', ''));

it('deletes the old files nothing of their clinic refers to, and keeps the rest', async () => {
  const a = await app.clinicWithKey('dental', ['chat:read'], 'media a');
  const b = await app.clinicWithKey('dental', ['chat:read'], 'media b');
  const store = pgMediaStore(app.orm.em);
  const put = (clinicId: number) => store.put(clinicId, Buffer.from(`file ${Math.random()}`), 'image/png');
  const [messageFile, callFile, orphan, recent] = [
    await put(a.clinicId),
    await put(a.clinicId),
    await put(a.clinicId),
    await put(a.clinicId),
  ];
  // Another clinic's file, named by one of clinic a's messages: that names nothing of b's.
  const othersFile = await put(b.clinicId);
  const f = fixtures(app.orm, a.clinicId);
  const { outbound } = await f.chat('0501112233');
  const { outbound: foreign } = await f.chat('0501112244');
  await sql('update "message" set "media_path" = ? where "id" = ?', [messageFile, outbound.id]);
  await sql('update "message" set "media_path" = ? where "id" = ?', [othersFile, foreign.id]);
  await f.call(null, 0, { recordingPath: callFile });
  const old = [messageFile, callFile, orphan, othersFile].map(idOf);
  await sql(
    `update "media_object" set "created_at" = '2026-01-01T00:00:00Z' where "id" in (${old.join(',')})`,
  );
  await sql(`update "media_object" set "created_at" = ? where "id" = ?`, [app.clock.now(), idOf(recent)]);

  // The server's sweep, on its clock: files created more than a day before it.
  expect(await app.server.mediaSweep.sweep()).toBe(2);
  const left = await sql(
    `select "id" from "media_object" where "id" in (${[...old, idOf(recent)].join(',')}) order by "id"`,
  );
  expect(left.map((r) => Number(r.id))).toEqual(
    [messageFile, callFile, recent].map(idOf).sort((x, y) => x - y),
  );
  // What is referred to still reads back.
  expect(await store.get(a.clinicId, messageFile)).not.toBeNull();
  expect(await store.get(a.clinicId, orphan)).toBeNull();
  expect(await app.server.mediaSweep.sweep()).toBe(0);
});
