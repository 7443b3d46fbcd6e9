import { createHash, randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm } from '../src/db/orm.ts';
import { type MediaStore, pgMediaStore } from '../src/media/store.ts';
import { createClinic } from '../src/services/clinics/clinics.ts';
import { testDatabase } from './helpers.ts';
import { pdf, png } from './media-files.ts';

/** The PostgreSQL store on a database of this file's own; two ORMs stand for two instances. */
let one: MikroORM;
let two: MikroORM;
let storeOne: MediaStore;
let storeTwo: MediaStore;
let clinicA: number;
let clinicB: number;

beforeAll(async () => {
  const db = await testDatabase();
  one = await openOrm(db.url);
  two = await openOrm(db.url);
  afterAll(async () => {
    await one.close();
    await two.close();
    await db.drop();
  });
  storeOne = pgMediaStore(one.em);
  storeTwo = pgMediaStore(two.em);
  const clinic = (name: string) =>
    createClinic(one.em.fork(), { name, kind: 'dental', mode: 'test', country: 'IL' }).then((c) => c.id);
  clinicA = await clinic('A');
  clinicB = await clinic('B');
});

describe('pgMediaStore', () => {
  it('put then get returns the same bytes and type, from another instance too', async () => {
    const key = await storeOne.put(clinicA, png(), 'image/png');
    expect(key).toMatch(/^med_\d+$/);
    expect(await storeOne.get(clinicA, key)).toEqual({ bytes: png(), mime: 'image/png' });
    expect(await storeTwo.get(clinicA, key)).toEqual({ bytes: png(), mime: 'image/png' });
  });

  it('keeps a large binary file byte for byte, with its size and SHA-256', async () => {
    const bytes = Buffer.concat([pdf(), randomBytes(3 * 1024 * 1024)]);
    const key = await storeOne.put(clinicA, bytes, 'application/pdf');
    const got = await storeTwo.get(clinicA, key);
    expect(got?.mime).toBe('application/pdf');
    expect(got?.bytes.equals(bytes)).toBe(true);
    const rows = await one.em
      .getConnection()
      .execute('select clinic_id, size, sha256 from media_object where id = ?', [Number(key.slice(4))]);
    expect(rows).toEqual([
      { clinic_id: clinicA, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
    ]);
  });

  it("another clinic's key finds nothing", async () => {
    const key = await storeOne.put(clinicA, png(), 'image/png');
    expect(await storeOne.get(clinicB, key)).toBeNull();
    expect(await storeTwo.get(clinicB, key)).toBeNull();
    const keyB = await storeOne.put(clinicB, pdf(), 'application/pdf');
    expect(await storeOne.get(clinicA, keyB)).toBeNull();
    expect(await storeOne.get(clinicB, keyB)).toEqual({ bytes: pdf(), mime: 'application/pdf' });
  });

  it.each([
    'med_999999',
    'med_0',
    'med_',
    'med_01',
    'med_-1',
    'med_1.5',
    'med_99999999999',
    '1',
    'pat_1',
    '',
  ])('an unknown or malformed key (%j) finds nothing', async (key) => {
    expect(await storeOne.get(clinicA, key)).toBeNull();
  });
});
