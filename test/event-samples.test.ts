import { describe, expect, it } from 'vitest';
import { exampleRecords } from '../src/events/examples.ts';
import { EVENT_TYPES } from '../src/events/types.ts';
import { kindOfId, prefixes } from '../src/lib/ids.ts';
import { Appointment } from '../src/services/appointments/appointment.resource.ts';
import { f, type Resource, restGroups } from '../src/services/resource.ts';
import {
  eventData,
  eventSample,
  presentExample,
  sampleEnvelope,
} from '../src/services/webhooks/sample-data.ts';

/**
 * Sample events are derived (issue 36): each type's data is its example record presented by the
 * definition, so a field added to a definition is in the samples without an edit, null when the
 * record lacks it; a non-null one the record lacks fails, naming the field and what to fill.
 */
const DETAILED = restGroups(true, []);
const withField = (field: ReturnType<typeof f.column>): Resource => ({
  ...Appointment,
  fields: { ...Appointment.fields, ward: field },
});
const where = 'the appointment example record (src/events/examples.ts)';

describe('sample events', () => {
  it.each([...EVENT_TYPES])(
    '%s: built from its example record, every field of its definition there',
    (type) => {
      const { resource } = eventData[type];
      const data = eventSample(type);
      // Every core field (the groups add to it): a field no sample shows would be a hand list's gap.
      for (const [name, field] of Object.entries(resource.fields))
        if (field.group === 'core') expect(Object.keys(data), `${type}: ${name}`).toContain(name);
    },
  );

  it('a nullable field added to a definition is in the sample, null without an edit', () => {
    const data = presentExample(
      withField(f.column('ward', 'String', { nullable: true })),
      DETAILED,
      exampleRecords.appointment,
      where,
    );
    expect(data.ward).toBeNull();
    // The rest as it was, in the outbox's key order (shorter keys first).
    expect(JSON.stringify({ ...data, ward: undefined })).toBe(
      JSON.stringify(eventSample('appointment.created')),
    );
    expect(Object.keys(data).indexOf('ward')).toBeLessThan(Object.keys(data).indexOf('start'));
  });

  it('a non-nullable field the example record lacks fails, naming the field and the record to fill', () => {
    expect(() =>
      presentExample(withField(f.column('ward', 'String')), DETAILED, exampleRecords.appointment, where),
    ).toThrow(`${where}: Appointment.ward is not nullable but came out null; fill ward.`);
    const { startAt: _, ...noStart } = exampleRecords.appointment;
    expect(() => presentExample(Appointment, DETAILED, noStart, where)).toThrow(
      'Appointment.start is not nullable but came out null; fill startAt.',
    );
    // Inside a joined object too.
    const nameless = { ...exampleRecords.appointment, branch: { id: 1 } };
    expect(() => presentExample(Appointment, DETAILED, nameless, where)).toThrow(
      'Appointment.branch.name is not nullable but came out null; fill name.',
    );
  });

  it('no id of a sample, its envelope included, names a record: each has the id form, past every real id', () => {
    const known = new Set<string>(Object.values(prefixes));
    const idsIn = (value: unknown): string[] =>
      typeof value === 'string'
        ? known.has(value.split('_')[0]) && /^[a-z]+_\d+$/.test(value)
          ? [value]
          : []
        : value && typeof value === 'object'
          ? Object.values(value).flatMap(idsIn)
          : [];
    for (const type of EVENT_TYPES) {
      const ids = idsIn(sampleEnvelope(type));
      // The envelope's, the record's, and those of what it embeds (a patient, a branch, …)
      expect(ids.length, type).toBeGreaterThanOrEqual(2);
      for (const id of ids) {
        // The form of an id of its kind (the OpenAPI patterns), and yet no id of a record:
        // a lookup of it is a 404 whatever the clinic holds.
        expect(id, `${type}: ${id}`).toMatch(/^[a-z]+_[1-9][0-9]{0,9}$/);
        expect(kindOfId(id), `${type}: ${id} could be a real record's id`).toBeNull();
      }
    }
  });

  it('a property no field reads (a misspelt column) fails', () => {
    expect(() =>
      presentExample(Appointment, DETAILED, { ...exampleRecords.appointment, nots: 'x' }, where),
    ).toThrow(`${where}: nots is a property no field of Appointment reads`);
  });
});
