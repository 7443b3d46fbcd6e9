import { beforeAll, describe, expect, it } from 'vitest';
import { entityNamed } from '../src/entities/index.ts';
import { Appointment } from '../src/services/appointments/appointment.resource.ts';
import { Patient, PatientSummary } from '../src/services/patients/patient.resource.ts';
import {
  CORE,
  checkResources,
  defineResource,
  defineShape,
  f,
  groups,
  presenterFor,
  readPlan,
} from '../src/services/resource.ts';
import { NamedRef } from '../src/services/shapes.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** The definitions refuse what would otherwise answer a silent null. */
let app: TestApp;
let metaOf: (name: string) => any;

beforeAll(async () => {
  app = await startTestApp();
  metaOf = (name) => {
    try {
      return app.orm.em.getMetadata(entityNamed(name));
    } catch {
      return undefined;
    }
  };
});

describe('resource definitions', () => {
  it('refuse a field declared without a source', () => {
    expect(() =>
      defineShape('NoSource', { name: { type: 'String', nullable: false, group: 'core' } as any }),
    ).toThrow(/NoSource\.name: a field needs a source/);
    expect(() =>
      defineResource({
        name: 'NoId',
        kind: 'Patient',
        scopes: [],
        fields: { name: f.column('firstName', 'String') },
      }),
    ).toThrow(/needs an f\.id\(\) field/);
    expect(() => defineShape('NamedRef', { id: f.id() })).toThrow(/NamedRef: defined twice/);
  });

  it('all of the service hold against the entities (as at start-up)', () => {
    expect(() => checkResources(metaOf)).not.toThrow();
  });

  it('refuse a source the entity does not have, or of the wrong kind', () => {
    const wrong = [
      defineResource({
        name: 'WrongColumn',
        kind: 'Patient',
        scopes: [],
        fields: { id: f.id(), email: f.column('emial', 'String') },
      }),
      defineResource({
        name: 'WrongTarget',
        kind: 'Patient',
        scopes: [],
        fields: { id: f.id(), species: f.join('species', 'Breed', NamedRef) },
      }),
      defineResource({
        name: 'RelationAsColumn',
        kind: 'Appointment',
        scopes: [],
        fields: { id: f.id(), branch: f.column('branch', 'String') },
      }),
      defineResource({
        name: 'NotNullOverNullable',
        kind: 'Patient',
        scopes: [],
        fields: { id: f.id(), email: f.column('email', 'String') },
      }),
      defineResource({
        name: 'JoinInJoin',
        kind: 'Appointment',
        scopes: [],
        fields: { id: f.id(), patient: f.join('patient', 'Patient', PatientSummary) },
      }),
      defineResource({
        name: 'JoinedColumnMissing',
        kind: 'Appointment',
        scopes: [],
        fields: {
          id: f.id(),
          branch: f.join(
            'branch',
            'Branch',
            defineShape('BadRef', { id: f.id(), title: f.column('title', 'String') }),
          ),
        },
      }),
    ];
    expect(() => checkResources(metaOf, wrong)).toThrow(
      new RegExp(
        [
          'Patient has no property emial',
          'species points at Species, not Breed',
          'branch is a relation; use f.ref or f.join',
          'email may be NULL but the field is declared non-null',
          'is a join inside a join',
          'Branch has no property title',
        ].join('[\\s\\S]*'),
      ),
    );
  });

  it('present loudly when a row was read without a field the definition needs', () => {
    const present = presenterFor(Patient, CORE);
    const row = { id: 1, firstName: 'A', lastName: 'B', phone: null, gender: null, birthDate: null };
    expect(() => present(row, { country: 'IL' })).toThrow(/Patient\.email: the row was read without/);
  });

  it('read what the fields need: groups and selections alike', () => {
    const plan = readPlan(Patient, ['first_name', 'email', 'status', 'appointments']);
    expect([...plan.fields].sort()).toEqual(['email', 'firstName']);
    expect(plan.joins).toEqual({ status: ['name', 'color'] });
    const vet = readPlan(
      Patient,
      Object.keys(Patient.fields).filter((n) => groups('include:owner').has(Patient.fields[n].group)),
    );
    expect(vet.joins.owner).toEqual(['firstName', 'lastName', 'phone', 'email']);
    expect(vet.joins.species).toBeUndefined();
    // The appointment's patient is attached by its list, not joined again.
    expect([...readPlan(Appointment, ['patient', 'start']).fields].sort()).toEqual(['patient', 'startAt']);
  });
});
