import { GraphQLObjectType, GraphQLSchema, graphql } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../src/auth/keys.ts';
import { readScopes } from '../src/auth/scopes.ts';
import { authenticated, newRequest, runRequest } from '../src/lib/request-context.ts';
import { schemas } from '../src/schema/index.ts';
import { Patient } from '../src/services/patients/patient.resource.ts';
import { getPatientRow } from '../src/services/patients/patients.ts';
import { CORE, present, viewFor } from '../src/services/resource.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Event `data` is the REST resource, stored as JSON; a GraphQL subscription resolves its fields
 * from that JSON. Nothing a resolver needs may hide outside the JSON: fields the resource was
 * presented without (owner, species, detailed fields) are loaded by id.
 */
let app: TestApp;
let key: string;
let patientId: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  const fx = fixtures(app.orm, c.clinicId);
  const { species } = await fx.catalog();
  const owner = await fx.owner({ first: 'Noa', last: 'Levi', phone: '050-123 4567' });
  patientId = `pat_${(await fx.patient({ first: 'Rex', last: 'Levi', owner, species })).id}`;
});

describe('a resource resolved from its stored JSON', () => {
  it('answers every field as REST detailed + include does', async () => {
    const ctx = authenticated(
      newRequest(app.clock, () => {}),
      await authenticate(app.orm.em, `Bearer ${key}`, 0),
      app.orm.em,
      false,
    );
    // What an event carries: the core resource, through JSON.
    const row = await getPatientRow(ctx, patientId, viewFor(Patient));
    const stored = JSON.parse(JSON.stringify(present(Patient, row, ctx.principal, CORE)));
    expect(stored).not.toHaveProperty('owner');
    expect(stored).not.toHaveProperty('address');

    const { publicSchema } = schemas();
    const selection = '{ firstName owner { id firstName phone } species { name } address { city } balance }';
    const full = await runRequest(ctx, () =>
      graphql({
        schema: publicSchema,
        source: `{ patient(id: "${patientId}") ${selection} }`,
        contextValue: ctx,
      }),
    );
    expect(full.errors).toBeUndefined();
    const rest = await app.get(
      `/v1/patients/${patientId}?response_format=detailed&include=owner,species`,
      key,
    );

    // As a subscription will: a field of type Patient whose value is the stored JSON.
    const events = new GraphQLSchema({
      query: new GraphQLObjectType({
        name: 'Query',
        fields: {
          event: { type: publicSchema.getType('Patient') as GraphQLObjectType, resolve: () => stored },
        },
      }),
    });
    const fromJson = await runRequest(ctx, () =>
      graphql({ schema: events, source: `{ event ${selection} }`, contextValue: ctx }),
    );
    expect(fromJson.errors).toBeUndefined();
    const p = (fromJson.data as any).event;
    expect(p).toEqual((full.data as any).patient);
    expect(p.owner).toEqual({
      id: rest.body.data.owner.id,
      firstName: 'Noa',
      phone: rest.body.data.owner.phone,
    });
    expect(p.species).toEqual({ name: rest.body.data.species.name });
    expect(p.address).toEqual({ city: rest.body.data.address.city });
    expect(p.balance).toBe(rest.body.data.balance);
  });
});
