import type { GraphQLResolveInfo } from 'graphql';
import { allOf } from '../auth/scopes.ts';
import { relayPageArgs } from '../db/list.ts';
import { prefixes } from '../lib/ids.ts';
import { camelOf } from '../lib/names.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { appointmentRecords } from '../services/appointments/appointments.ts';
import { callRecords } from '../services/calls/calls.ts';
import { groupsOfRequest } from '../services/groups-params.ts';
import { Client } from '../services/patients/client.resource.ts';
import { animalRecords, clientRecords } from '../services/patients/clients.ts';
import { paymentRecords } from '../services/payments/payments.ts';
import { checkClinicKind, getRecord, listRecords, type RecordList } from '../services/record-lists.ts';
import { ownIncludesOf, restGroups } from '../services/resource.ts';
import { treatmentRecords } from '../services/treatments/treatments.ts';
import { builder } from './builder.ts';
import { CallType } from './calls/types.ts';
import { prefetchChildPages } from './child-pages.ts';
import { argsOn, type Face, withServiceArgs } from './face-args.ts';
import { AppointmentType, PatientType, PaymentType, TreatmentType } from './patients/types.ts';
import { nodeType } from './resource-types.ts';
import { connectionField, restOne, restPage, toConnection, toRestPage } from './shared.ts';

/**
 * The top-level record reads the spec leaves open: for each, a Rest page and a Rest object
 * (GET /v1/<plural> and /v1/<plural>/{id}) and a Public connection and field, over the one
 * list (src/services/record-lists.ts). GraphQL presents every field (a connection's rows are
 * read as selected by the same view the REST detailed format uses).
 */
interface Records {
  list: RecordList;
  /** appointments → listAppointments, getAppointment, appointments, appointment. */
  plural: string;
  singular: string;
  type: any;
  /** What the list holds, and its order (newest first by its time, or oldest first by id). */
  what: string;
  order: 'newest' | 'oldest';
}

/** A client of a veterinary clinic (`own_…`); node(id:) reaches it. */
const ClientType = nodeType(Client, (id, ctx) => getRecord(ctx, Client, id, restGroups(true, [])));

const records: Records[] = [
  {
    list: appointmentRecords,
    plural: 'appointments',
    singular: 'appointment',
    type: AppointmentType,
    what: 'Appointments',
    order: 'newest',
  },
  {
    list: treatmentRecords,
    plural: 'treatments',
    singular: 'treatment',
    type: TreatmentType,
    what: 'Treatments',
    order: 'newest',
  },
  {
    list: paymentRecords,
    plural: 'payments',
    singular: 'payment',
    type: PaymentType,
    what: 'Payments and refunds',
    order: 'newest',
  },
  {
    list: callRecords,
    plural: 'calls',
    singular: 'call',
    type: CallType,
    what: "Calls the clinic's phone system reported",
    order: 'newest',
  },
  {
    list: animalRecords,
    plural: 'animals',
    singular: 'animal',
    type: PatientType,
    what: "Veterinary clinics: the animals (the clinic's patients)",
    order: 'oldest',
  },
  {
    list: clientRecords,
    plural: 'clients',
    singular: 'client',
    type: ClientType,
    what: "Veterinary clinics: the animals' owners",
    order: 'oldest',
  },
];

const cap = (s: string) => s[0].toUpperCase() + s.slice(1);

/** An id filter's text: `patient_id` → only the records of that patient. */
const refDescription = (param: string, kind: keyof typeof prefixes) =>
  `Only those of this ${param.replace(/_id$/, '').replace(/_/g, ' ')} (an id such as ${prefixes[kind]}_1).`;

/** The list's description, with its fields named as `face` names them. */
function describe(r: Records, face: Face): string {
  const order = r.order === 'newest' ? `newest first by ${timeOf(r, face)}` : 'oldest first';
  return `${r.what}, ${order}; with ${face === 'Public' ? 'updatedSince' : 'updated_since'}, oldest change first.`;
}

/** The field `from` and `to` bound (the list's time), as `face` names it. */
function timeOf(r: Records, face: Face): string {
  const [name] = Object.entries(r.list.resource.fields).find(
    ([, f]) => f.source.kind === 'column' && f.source.prop === r.list.timeProp,
  ) ?? [r.list.timeProp];
  return face === 'Public' ? camelOf(name) : name;
}

builder.queryFields((t) => {
  const fields: Record<string, any> = {};
  for (const r of records) {
    const { resource } = r.list;
    const authScopes = allOf(resource.scopes);
    const includes = ownIncludesOf(resource);
    // GraphQL reads whatever a query selects, so its plan holds every group a record can show.
    const everything = restGroups(true, includes);
    const includeArg: Record<string, any> = includes.length
      ? {
          include: t.arg({
            type: 'CommaList',
            required: false,
            description: `Embeds ${includes.join(', ')}.`,
          }),
        }
      : {};
    const filterArgs = (face: Face) =>
      argsOn(face, {
        ...Object.fromEntries(
          Object.entries(r.list.refs).map(([p, [, kind]]) => [
            p,
            t.arg.string({ required: false, description: refDescription(p, kind) }),
          ]),
        ),
        from: t.arg.string({
          required: false,
          description: `Only ${r.plural} whose ${timeOf(r, face)} is at or after this time (inclusive): ISO 8601 with a zone, or a date.`,
        }),
        to: t.arg.string({
          required: false,
          description: `Only ${r.plural} whose ${timeOf(r, face)} is before this time: ISO 8601 with a zone, or a date.`,
        }),
        updated_since: t.arg.string({
          required: false,
          description:
            'Changed at or after this time (ISO 8601 with a zone, or a date); oldest change first (incremental sync).',
        }),
      });
    fields[r.plural] = connectionField(t, r.type, {
      subGraphs: ['Public'],
      nullable: true,
      authScopes,
      description: describe(r, 'Public'),
      args: filterArgs('Public'),
      resolve: (_root: unknown, args: any, ctx: RequestContext, info: GraphQLResolveInfo) =>
        withServiceArgs(args, async (a) => {
          const page = await listRecords(ctx, r.list, { ...a, ...relayPageArgs(a) }, everything);
          await prefetchChildPages(ctx, info, page.items);
          return toConnection(page);
        }),
    });
    fields[`list${cap(r.plural)}`] = t.field({
      type: restPage(`${cap(r.singular)}ListPage`, r.type),
      subGraphs: ['Rest'],
      authScopes,
      description: describe(r, 'Rest'),
      args: {
        ...filterArgs('Rest'),
        limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
        cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
        response_format: t.arg.string({ required: false }),
        ...includeArg,
      },
      resolve: async (_root: unknown, args: any, ctx: RequestContext) =>
        toRestPage(await listRecords(ctx, r.list, args, groupsOfRequest(args, includes))),
    });
    fields[`get${cap(r.singular)}`] = t.field({
      type: restOne(`${cap(r.singular)}Body`, r.type),
      subGraphs: ['Rest'],
      authScopes,
      description: `One ${r.singular}, by its id; 404 when the clinic has none with it.`,
      args: {
        id: t.arg.string({ required: true }),
        response_format: t.arg.string({ required: false }),
        ...includeArg,
      },
      resolve: async (_root: unknown, args: any, ctx: RequestContext) => {
        const groups = groupsOfRequest(args, includes);
        checkClinicKind(ctx, r.list);
        return { data: await getRecord(ctx, resource, args.id, groups) };
      },
    });
  }
  return fields;
});
