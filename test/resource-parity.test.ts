import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { Appointment } from '../src/services/appointments/appointment.resource.ts';
import { catalogLists } from '../src/services/catalog/catalog.ts';
import { Patient } from '../src/services/patients/patient.resource.ts';
import { Payment } from '../src/services/payments/payment.resource.ts';
import { allShapes, type Shape, shapeOf } from '../src/services/resource.ts';
import { Treatment } from '../src/services/treatments/treatment.resource.ts';
import { fullFixtures } from './full-fixtures.ts';
import { selectionOf, startTestApp, type TestApp } from './helpers.ts';

/**
 * Every resource answers the same JSON in GraphQL (every field selected) as in REST (detailed +
 * include), on fixtures where every nullable field has a value in some row. The selections are
 * built from the definitions and the coverage is checked against them, so a new field is
 * compared, and needs a fixture value, without anyone editing this file.
 */
let app: TestApp;
let key: string;

/** Which fields of which shapes had a non-null value in what REST returned. */
const seen = new Map<Shape, Map<string, boolean>>();

function cover(shape: Shape, value: unknown): void {
  if (value == null) return;
  if (Array.isArray(value)) {
    for (const v of value) cover(shape, v);
    return;
  }
  let fields = seen.get(shape);
  if (!fields) {
    fields = new Map();
    seen.set(shape, fields);
  }
  for (const [name, field] of Object.entries(shape.fields)) {
    const v = (value as Record<string, unknown>)[name];
    if (v != null) fields.set(name, true);
    else if (!fields.has(name)) fields.set(name, false);
    const inner = shapeOf(field.type);
    if (inner) cover(inner, v);
  }
}

async function rest(path: string) {
  const r = await app.get(path, key);
  expect(r.status, path).toBe(200);
  return r.body.data;
}

async function gql(query: string) {
  const r = await app.gql(query, {}, key);
  expect(r.body.errors, query).toBeUndefined();
  return r.body.data;
}

const records = [
  { field: 'appointments', resource: Appointment },
  { field: 'treatments', resource: Treatment },
  { field: 'payments', resource: Payment },
] as const;

const nodes = (connection: any) => connection.edges.map((e: any) => e.node);

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  await fullFixtures(app.orm, c.clinicId);
});

describe('GraphQL and REST answer the same resources', () => {
  it('patients, with their appointments, treatments and payments', async () => {
    const nested = records
      .map((r) => `${r.field}(first: 100) { edges { node ${selectionOf(r.resource)} } }`)
      .join(' ');
    const selection = selectionOf(Patient).replace(/ }$/, ` ${nested} }`);
    const data = await gql(`{ patients(first: 100) { edges { node ${selection} } } }`);
    const patients = nodes(data.patients);
    const listed = await rest('/v1/patients?limit=100&response_format=detailed&include=owner,species');
    expect(patients.length).toBeGreaterThan(1);
    expect(patients.map(({ appointments, treatments, payments, ...p }: any) => p)).toEqual(listed);
    cover(Patient, listed);

    for (const p of patients) {
      const one = await rest(`/v1/patients/${p.id}?response_format=detailed&include=owner,species`);
      expect((await gql(`{ patient(id: "${p.id}") ${selectionOf(Patient)} }`)).patient).toEqual(one);
      for (const r of records) {
        const page = await rest(`/v1/patients/${p.id}/${r.field}?limit=100&include=owner,species`);
        expect(nodes(p[r.field]), `${p.id} ${r.field}`).toEqual(page);
        cover(r.resource, page);
      }
    }
  });

  for (const list of catalogLists) {
    it(`catalog: ${list.publicName}`, async () => {
      const route = restRoutes.find((r) => r.field === list.restName);
      expect(route, list.restName).toBeDefined();
      const items = await rest(`/v1${route?.path}`);
      expect(items.length, list.publicName).toBeGreaterThan(1);
      expect((await gql(`{ ${list.publicName} ${selectionOf(list.resource)} }`))[list.publicName]).toEqual(
        items,
      );
      cover(list.resource, items);
    });
  }

  it('the fixtures gave every nullable field of every resource a value', () => {
    const missing: string[] = [];
    for (const shape of allShapes()) {
      const fields = seen.get(shape);
      if (!fields) {
        missing.push(`${shape.name} (never returned)`);
        continue;
      }
      for (const name of Object.keys(shape.fields))
        if (fields.get(name) !== true) missing.push(`${shape.name}.${name}`);
    }
    expect(missing).toEqual([]);
  });
});
