import { defineEntity, p } from '@mikro-orm/core';
import { clinicModes } from '../lib/clinic-mode.ts';

export const clinicKinds = ['dental', 'veterinary'] as const;
export type ClinicKind = (typeof clinicKinds)[number];

const ClinicSchema = defineEntity({
  name: 'Clinic',
  properties: {
    id: p.integer().primary().autoincrement(),
    name: p.string(),
    kind: p.enum(clinicKinds),
    /** Test or live, for good (src/lib/clinic-mode.ts): its keys' prefix, network and URL policy. */
    mode: p.enum(clinicModes),
    /** ISO 3166 alpha-2; phones are parsed and shown in this country's conventions. */
    country: p.string().length(2),
    timezone: p.string().default('UTC'),
    /** The clinic's own messaging number, E.164. */
    phone: p.string().nullable(),
    handledMarkingEnabled: p.boolean().default(false),
    aiTranscriptionEnabled: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class Clinic extends ClinicSchema.class {}
ClinicSchema.setClass(Clinic);

export { ClinicSchema };
