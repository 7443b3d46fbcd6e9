import type { EntityProperty } from '@mikro-orm/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { entityNamed } from '../src/entities/index.ts';
import '../src/services/all-writes.ts';
import type { Field } from '../src/services/resource.ts';
import { inputNameOf } from '../src/services/write-inputs-of.ts';
import { allWrites, type WriteOperation } from '../src/services/writes.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * A write's text input is no longer than its column holds (issue 36): a 41-character value sent
 * to an input of 400 for a varchar(40) column reached the database and answered 500
 * internal_error instead of the input's 422. Every top-level input field that stores into a
 * column of a limited length (varchar(n): `length` in the entity, 255 when a string gives none)
 * must have a `max` no longer than it; a column with a length and an input without a max fails
 * the same way. Sent over HTTP below for one field, so the rule is shown to be the cause.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});

/**
 * Inputs bounded by their own rule rather than a max, by input name, and why no value longer
 * than the column passes it.
 */
const BOUNDED_OTHERWISE: Record<string, string> = {
  color: '#RGB or #RRGGBB (its pattern): at most 7 characters',
  currency: 'an ISO 4217 code (its check): 3 letters',
  template: "the name of one of the clinic's templates, whose names the column holds: any other is a 422",
};

/** The varchar length of a column, or undefined for an unlimited one (text, json, numbers). */
function lengthOf(p: EntityProperty): number | undefined {
  const type = (p.columnTypes?.[0] ?? '').toLowerCase();
  const m = /^(?:varchar|character varying)\((\d+)\)$/.exec(type);
  if (m) return Number(m[1]);
  return /^(?:varchar|character varying)$/.test(type) && p.length ? p.length : undefined;
}

/** The string at the heart of an input (through optional, nullable, default and pipes), or undefined. */
function stringOf(schema: unknown): { maxLength: number | null } | undefined {
  let s = schema as any;
  for (let i = 0; i < 8 && s?._zod?.def; i++) {
    const d = s._zod.def;
    if (d.type === 'string') return s;
    if (['optional', 'nullable', 'default'].includes(d.type)) s = d.innerType;
    else if (d.type === 'pipe') s = d.in;
    else return undefined;
  }
  return undefined;
}

/** The column a top-level input field is stored in: the field of its input name with a column or ref source. */
function columnOf(op: WriteOperation, input: string): string | undefined {
  for (const [name, field] of Object.entries(op.resource.fields) as [string, Field][]) {
    if (inputNameOf(name, field) !== input) continue;
    if (field.source.kind === 'column') return field.source.prop;
  }
  return undefined;
}

describe('every text input fits its column', () => {
  it('no input is longer than its varchar column, and no limited column has an unlimited input', () => {
    const problems: string[] = [];
    for (const op of allWrites()) {
      const meta = app.orm.getMetadata().get(entityNamed(op.resource.kind));
      for (const [input, schema] of Object.entries(op.input.shape)) {
        const text = stringOf(schema);
        const prop = text && columnOf(op, input);
        const p = prop ? meta.properties[prop] : undefined;
        const length = p && lengthOf(p);
        if (!text || !length || BOUNDED_OTHERWISE[input]) continue;
        if (text.maxLength == null)
          problems.push(
            `${op.name}.${input}: no max, and its column ${meta.tableName}.${p.fieldNames[0]} holds ${length}`,
          );
        else if (text.maxLength > length)
          problems.push(
            `${op.name}.${input}: max ${text.maxLength}, and its column ${meta.tableName}.${p.fieldNames[0]} holds ${length} (a longer value is a 500: make the input's max ${length} or the column longer)`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it('a value longer than its column is a 422 naming the field, not a 500', async () => {
    const { clinicId } = await app.clinicWithKey('dental', ['patients:write']);
    const key = await app.key(clinicId, ['treatments:write', 'patients:write']);
    const patient = await app.post('/v1/patients', { first_name: 'Long' }, key);
    expect(patient.status).toBe(201);
    // description is varchar(255): its input's max is 255.
    const r = await app.post(
      `/v1/patients/${patient.body.data.id}/treatments`,
      { performed_at: '2026-12-01T09:30:00Z', description: 'x'.repeat(256) },
      key,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error.param).toBe('description');
  });
});
