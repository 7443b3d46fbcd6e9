import type { GraphQLObjectType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { readScopes } from '../src/auth/scopes.ts';
import { seedPatients } from '../src/demo/seed-patients.ts';
import { executionTwin } from '../src/schema/execution-schema.ts';
import { schemas } from '../src/schema/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A connection's edges and pageInfo, an edge's node and a node's id resolve to their parent's
 * property of the same name: the execution twin (src/schema/execution-schema.ts) reads them
 * inline instead of calling a resolver per edge and per node.
 */
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  const c = await app.clinicWithKey('veterinary', readScopes);
  key = c.key;
  await seedPatients(app.orm.em.fork(), c.clinicId, 5);
});

const fieldsOf = (schema: ReturnType<typeof schemas>['publicSchema'], type: string) =>
  (schema.getType(type) as GraphQLObjectType).getFields();

describe('fields read inline by the executor', () => {
  it('the twin drops their resolvers; the Public schema keeps them', () => {
    const { publicSchema } = schemas();
    const twin = executionTwin(publicSchema).schema;
    for (const [type, field] of [
      ['PatientConnection', 'edges'],
      ['PatientConnection', 'pageInfo'],
      ['PatientEdge', 'node'],
      ['Patient', 'id'],
      ['Appointment', 'id'],
    ]) {
      expect(fieldsOf(twin, type)[field].resolve, `${type}.${field}`).toBeUndefined();
      expect(fieldsOf(publicSchema, type)[field].resolve, `${type}.${field}`).toBeDefined();
    }
    // A field with work of its own (a cursor computed when asked for) keeps its resolver.
    expect(fieldsOf(twin, 'Patient').appointments.resolve).toBeDefined();
  });

  it('answers as before: ids, edges, nodes, cursors and pageInfo', async () => {
    const r = await app.gql(
      '{ patients(first: 2) { pageInfo { hasNextPage endCursor } edges { cursor node { id appointments(first: 1) { edges { node { id } } } } } } }',
      {},
      key,
    );
    expect(r.body.errors).toBeUndefined();
    const { edges, pageInfo } = r.body.data.patients;
    expect(edges).toHaveLength(2);
    expect(edges[0].node.id).toMatch(/^pat_\d+$/);
    expect(edges[0].cursor).toEqual(expect.any(String));
    expect(pageInfo).toEqual({ hasNextPage: true, endCursor: edges[1].cursor });
    expect(edges[0].node.appointments.edges[0].node.id).toMatch(/^appt_\d+$/);
  });
});
