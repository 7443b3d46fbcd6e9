import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

let app: TestApp;
let vetKey: string;
let dentalKey: string;

beforeAll(async () => {
  app = await startTestApp();
  const vet = await app.clinicWithKey('veterinary', readScopes);
  vetKey = vet.key;
  await fixtures(app.orm, vet.clinicId).catalog();
  const dental = await app.clinicWithKey('dental', readScopes);
  dentalKey = dental.key;
  await fixtures(app.orm, dental.clinicId).catalog();
});

describe('catalog lists', () => {
  it.each([
    [
      '/v1/catalog/branches',
      { name: 'Main branch', phone: '+97235550100', color: '#336699', address: { city: 'Tel Aviv' } },
    ],
    ['/v1/catalog/appointments/types', { name: 'Check-up', duration_minutes: 30, color: null }],
    ['/v1/catalog/appointments/statuses', { name: 'Scheduled', color: '#00f', enabled: true }],
    [
      '/v1/catalog/treatments',
      {
        name: 'Cleaning',
        code: 'D1110',
        price: 250,
        color: null,
        category_id: expect.stringMatching(/^trc_/),
      },
    ],
    ['/v1/catalog/providers', { name: 'Dr. Levi', type: 'dentist', color: null }],
    ['/v1/catalog/billing/accounts', { business_name: 'Clinic Ltd.', business_id: '515000000' }],
    ['/v1/catalog/measurements', { name: 'Weight', unit: 'kg', is_required: true }],
  ])('%s is a bounded {data: [...]} list', async (path, first) => {
    const r = await app.get(path, vetKey);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['data']);
    expect(r.body.data[0]).toMatchObject({ id: expect.any(String), ...first });
  });

  it('species, breeds (filterable by species_id) and vaccines', async () => {
    const species = (await app.get('/v1/catalog/species', vetKey)).body.data;
    expect(species.map((s: any) => s.name)).toEqual(['Cat', 'Dog']);
    const breeds = (await app.get('/v1/catalog/breeds', vetKey)).body.data;
    expect(breeds.map((b: any) => b.name)).toEqual(['Beagle', 'Siamese']);
    const dog = species.find((s: any) => s.name === 'Dog').id;
    const dogBreeds = (await app.get(`/v1/catalog/breeds?species_id=${dog}`, vetKey)).body.data;
    expect(dogBreeds).toEqual([{ id: expect.stringMatching(/^brd_/), name: 'Beagle', species_id: dog }]);
    expect((await app.get('/v1/catalog/breeds?species_id=spc_999999', vetKey)).body.data).toEqual([]);
    expect((await app.get('/v1/catalog/breeds?species_id=dog', vetKey)).status).toBe(422);
    const vaccines = (await app.get('/v1/catalog/vaccines', vetKey)).body.data;
    const rabies = vaccines.find((v: any) => v.name === 'Rabies');
    const booster = vaccines.find((v: any) => v.name === 'Rabies booster');
    expect(rabies).toEqual({
      id: expect.stringMatching(/^vac_/),
      name: 'Rabies',
      code: 'RB',
      species_id: dog,
      interval_months: 12,
      next_vaccine_id: booster.id,
      price: 100,
      batch_required: true,
    });
  });

  it('veterinary lists at a dental clinic are empty (docs/decisions.md)', async () => {
    for (const path of [
      '/v1/catalog/species',
      '/v1/catalog/breeds',
      '/v1/catalog/vaccines',
      '/v1/catalog/measurements',
    ]) {
      const r = await app.get(path, dentalKey);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ data: [] });
    }
  });

  it('the same lists in GraphQL', async () => {
    const r = await app.gql(
      '{ branches { id name address { city } } appointmentTypes { durationMinutes } appointmentStatuses { enabled } treatmentMenu { code } providers { type } billingAccounts { businessName } species { name } breeds(speciesId: null) { name } vaccines { intervalMonths } measurements { unit } }',
      {},
      vetKey,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.branches[0].address.city).toBe('Tel Aviv');
    expect(r.body.data.species).toHaveLength(2);
    expect(r.body.data.vaccines).toHaveLength(2);
    const rest = (await app.get('/v1/catalog/treatments', vetKey)).body.data[0].code;
    expect(r.body.data.treatmentMenu[0].code).toBe(rest);
  });
});
