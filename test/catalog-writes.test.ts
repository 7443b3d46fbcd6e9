import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { catalogLists, nounText } from '../src/services/catalog/catalog.ts';
import { catalogBodies } from '../src/services/catalog/catalog-bodies.ts';
import type { Resource } from '../src/services/resource.ts';
import { writtenFields } from '../src/services/write-inputs-of.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Catalog writes (issue 16): every list's entries created, changed, disabled (out of the list,
 * readable by id, no longer referable) and enabled again, over REST and GraphQL; bodies checked
 * field by field; scopes, clinic kinds, retries and If-Match as for every write.
 */
let app: TestApp;
let vet: { clinicId: number; key: string };
let dental: { clinicId: number; key: string };
let readOnly: string;
let speciesId: string;
let foreignSpecies: string;

beforeAll(async () => {
  app = await startTestApp();
  vet = await app.clinicWithKey('veterinary', [...readScopes, 'catalog:write', 'patients:write']);
  dental = await app.clinicWithKey('dental', [...readScopes, 'catalog:write']);
  readOnly = await app.key(vet.clinicId, readScopes);
  const cat = await fixtures(app.orm, vet.clinicId).catalog();
  speciesId = `spc_${cat.species.id}`;
  await fixtures(app.orm, dental.clinicId).catalog();
  const other = await app.clinicWithKey('veterinary', readScopes);
  foreignSpecies = `spc_${(await fixtures(app.orm, other.clinicId).catalog()).species.id}`;
});

beforeEach(() => app.clock.set('2026-11-20T08:00:00Z'));

/** The list's example body with references this clinic has. */
const bodyOf = (noun: string) =>
  Object.fromEntries(
    Object.entries(catalogBodies[noun].example).map(([k, v]) => [k, k === 'species_id' ? speciesId : v]),
  );

/** The fields a creation must give, as its definition says. */
const requiredOf = (r: Resource) =>
  writtenFields(r, 'create').flatMap(([input, , , , mode]) => (mode === 'required' ? [input] : []));

/** The body's scalar fields as the resource shows them (phones and addresses are normalised). */
const shown = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'phone' && k !== 'address'));

describe.each(catalogLists.map((l) => [l.path, l] as const))('%s', (_path, list) => {
  const path = `/v1${list.path}`;
  const key = () => vet.key;

  it('creates, reads by id, changes, disables and enables an entry', async () => {
    const body = bodyOf(list.noun);
    const created = await app.post(path, body, key());
    expect(created.status).toBe(201);
    const entry = created.body.data;
    expect(entry).toMatchObject({
      ...shown(body),
      disabled_at: null,
      created_at: '2026-11-20T08:00:00.000Z',
    });
    expect(created.headers.get('etag')).toBe(`"${Date.parse(entry.updated_at)}"`);

    const read = await app.get(`${path}/${entry.id}`, key());
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(entry);

    // Lists keep the spec's shape; detailed adds the entry fields.
    const listed = (await app.get(path, key())).body.data.find((e: any) => e.id === entry.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('disabled_at');
    const detailed = (await app.get(`${path}?response_format=detailed`, key())).body.data;
    expect(detailed.find((e: any) => e.id === entry.id)).toEqual(entry);

    const [field] = requiredOf(list.resource);
    app.clock.set('2026-11-20T09:00:00Z');
    const changed = await app.send('PATCH', `${path}/${entry.id}`, { [field]: 'Renamed entry' }, key());
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      [field]: 'Renamed entry',
      updated_at: '2026-11-20T09:00:00.000Z',
    });

    const disabled = await app.post(`${path}/${entry.id}/disable`, {}, key());
    expect(disabled.status).toBe(200);
    expect(disabled.body.data.disabled_at).toBe('2026-11-20T09:00:00.000Z');
    expect((await app.get(path, key())).body.data.map((e: any) => e.id)).not.toContain(entry.id);
    expect((await app.get(`${path}/${entry.id}`, key())).body.data).toEqual(disabled.body.data);
    // Disabling again changes nothing (not even updated_at).
    const again = await app.post(`${path}/${entry.id}/disable`, {}, key());
    expect(again.body.data).toEqual(disabled.body.data);

    const enabled = await app.post(`${path}/${entry.id}/enable`, {}, key());
    expect(enabled.body.data.disabled_at).toBeNull();
    expect((await app.get(path, key())).body.data.map((e: any) => e.id)).toContain(entry.id);
  });

  it('refuses bad bodies naming the field', async () => {
    const body = bodyOf(list.noun);
    const typo = await app.post(path, { ...body, nmae: 'x' }, key());
    expect(typo.status).toBe(422);
    expect(typo.body.error).toMatchObject({ code: 'validation_failed', param: 'nmae' });
    for (const required of requiredOf(list.resource)) {
      const { [required]: _, ...rest } = body;
      const missing = await app.post(path, rest, key());
      expect(missing.status).toBe(422);
      expect(missing.body.error.param).toBe(required);
    }
    const empty = await app.post(path, { ...body, [requiredOf(list.resource)[0]]: '' }, key());
    expect(empty.status).toBe(422);
  });

  it('needs catalog:write (and the list’s own read scope), and the clinic’s own entries', async () => {
    const denied = await app.post(path, bodyOf(list.noun), readOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('catalog:write');
    if (list.veterinaryOnly) {
      const atDental = await app.post(path, bodyOf(list.noun), dental.key);
      expect(atDental.status).toBe(404);
    }
  });

  it(`an unknown ${nounText(list)} id is a 404, for reads and writes`, async () => {
    for (const r of [
      await app.get(`${path}/nope_1`, key()),
      await app.send('PATCH', `${path}/nope_1`, {}, key()),
      await app.post(`${path}/nope_1/disable`, {}, key()),
    ])
      expect(r.status).toBe(404);
  });
});

describe('references, retries and races', () => {
  it('a disabled entry cannot be named by a new write; an enabled one can', async () => {
    const species = (await app.post('/v1/catalog/species', { name: 'Ferret' }, vet.key)).body.data.id;
    await app.post(`/v1/catalog/species/${species}/disable`, {}, vet.key);
    const r = await app.post('/v1/catalog/breeds', { name: 'Angora', species_id: species }, vet.key);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'validation_failed', param: 'species_id' });
    expect(r.body.error.message).toContain('disabled');
    await app.post(`/v1/catalog/species/${species}/enable`, {}, vet.key);
    expect(
      (await app.post('/v1/catalog/breeds', { name: 'Angora', species_id: species }, vet.key)).status,
    ).toBe(201);
  });

  it("another clinic's entry is a 404; another clinic's reference the 422 an unknown one is", async () => {
    expect((await app.get(`/v1/catalog/species/${foreignSpecies}`, vet.key)).status).toBe(404);
    expect(
      (await app.send('PATCH', `/v1/catalog/species/${foreignSpecies}`, { name: 'x' }, vet.key)).status,
    ).toBe(404);
    const r = await app.post('/v1/catalog/breeds', { name: 'Mixed', species_id: foreignSpecies }, vet.key);
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('species_id');
  });

  it('null clears a nullable field; a required one cannot be cleared', async () => {
    const b = (await app.post('/v1/catalog/branches', bodyOf('Branch'), dental.key)).body.data;
    expect(b.phone).toBe('+97235550100');
    expect(b.address.city).toBe('Haifa');
    const cleared = await app.send(
      'PATCH',
      `/v1/catalog/branches/${b.id}`,
      { phone: null, address: null },
      dental.key,
    );
    expect(cleared.body.data).toMatchObject({ phone: null, address: { city: null } });
    const r = await app.send('PATCH', `/v1/catalog/branches/${b.id}`, { name: null }, dental.key);
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('name');
    const bad = await app.send(
      'PATCH',
      `/v1/catalog/branches/${b.id}`,
      { color: 'blue', phone: '12' },
      dental.key,
    );
    expect(bad.status).toBe(422);
  });

  it('Idempotency-Key replays a creation; a stale If-Match is a 412 that changes nothing', async () => {
    const headers = { 'idempotency-key': 'provider-create-1' };
    const body = { name: 'Dr. Idem', type: 'hygienist' };
    const first = await app.post('/v1/catalog/providers', body, dental.key, headers);
    const second = await app.post('/v1/catalog/providers', body, dental.key, headers);
    expect(second.body.data.id).toBe(first.body.data.id);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const id = first.body.data.id;
    const etag = first.headers.get('etag') as string;
    app.clock.set('2026-11-20T10:00:00Z');
    expect(
      (
        await app.send('PATCH', `/v1/catalog/providers/${id}`, { color: '#fff' }, dental.key, {
          'if-match': etag,
        })
      ).status,
    ).toBe(200);
    const stale = await app.send('PATCH', `/v1/catalog/providers/${id}`, { color: '#000' }, dental.key, {
      'if-match': etag,
    });
    expect(stale.status).toBe(412);
    expect((await app.get(`/v1/catalog/providers/${id}`, dental.key)).body.data.color).toBe('#fff');
  });

  it('GraphQL: a mutation per write, and node(id:) reaches a disabled entry', async () => {
    const created = await app.gql(
      'mutation { createAppointmentType(input: {name: "Surgery", durationMinutes: 90}) { appointmentTypeItem { id name durationMinutes disabledAt } } }',
      {},
      dental.key,
    );
    expect(created.body.errors).toBeUndefined();
    const t = created.body.data.createAppointmentType.appointmentTypeItem;
    expect(t).toMatchObject({ name: 'Surgery', durationMinutes: 90, disabledAt: null });
    const disabled = await app.gql(
      `mutation { disableAppointmentType(input: {id: "${t.id}"}) { appointmentTypeItem { id } } }`,
      {},
      dental.key,
    );
    expect(disabled.body.errors).toBeUndefined();
    const node = await app.gql(
      `{ node(id: "${t.id}") { ... on AppointmentTypeItem { name disabledAt } } appointmentTypes { id } }`,
      {},
      dental.key,
    );
    expect(node.body.data.node).toEqual({ name: 'Surgery', disabledAt: '2026-11-20T08:00:00.000Z' });
    expect(node.body.data.appointmentTypes.map((x: any) => x.id)).not.toContain(t.id);
  });
});
