import type { GraphQLResolveInfo } from 'graphql';
import { allOf } from '../../auth/scopes.ts';
import { relayPageArgs } from '../../db/list.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { patientAppointments } from '../../services/appointments/appointments.ts';
import type { ChildList } from '../../services/child-lists.ts';
import { groupsOfRequest } from '../../services/groups-params.ts';
import { Patient } from '../../services/patients/patient.resource.ts';
import { getPatient, listPatients } from '../../services/patients/patients.ts';
import { listPatientRecords, recordsOfPatient } from '../../services/patients/records.ts';
import { patientPayments } from '../../services/payments/payments.ts';
import { includesOf, type Row, viewFor, viewOfSelection } from '../../services/resource.ts';
import { patientTreatments } from '../../services/treatments/treatments.ts';
import { builder } from '../builder.ts';
import { childListField, prefetchChildPages, prefetchedPage, registerChildFields } from '../child-pages.ts';
import { argsOn, type Face, withServiceArgs } from '../face-args.ts';
import { selectedFields } from '../selection.ts';
import { connectionField, restOne, restPage, toConnection, toRestPage } from '../shared.ts';
import { AppointmentType, everyPatientField, PatientType, PaymentType, TreatmentType } from './types.ts';

/** Scopes come from the definitions (`scopes` of each resource). */
const patientScopes = allOf(Patient.scopes);

/**
 * A patient's records: each a Public connection on Patient and a Rest page under
 * /v1/patients/{id}/…, over the same child list (src/services/child-lists.ts).
 */
interface Records {
  field: 'appointments' | 'treatments' | 'payments';
  restName: string;
  list: ChildList;
  type: any;
  description: string;
  /** The same, with REST's names. */
  restDescription: string;
  /** Its own filters, named as `face` names them (face-args.ts). */
  filterArgs?: (t: any, face: Face) => Record<string, any>;
}

const records: Records[] = [
  {
    field: 'appointments',
    restName: 'listPatientAppointments',
    list: patientAppointments,
    type: AppointmentType,
    description: "The patient's appointments, newest first by start.",
    restDescription: "The patient's appointments, newest first by start.",
  },
  {
    field: 'treatments',
    restName: 'listPatientTreatments',
    list: patientTreatments,
    type: TreatmentType,
    description: "The patient's treatments, newest first by performedAt.",
    restDescription: "The patient's treatments, newest first by performed_at.",
    filterArgs: (t, face) =>
      argsOn(face, {
        appointment_id: t.arg.string({
          required: false,
          description: 'Only the treatments of this appointment (an id such as appt_1).',
        }),
      }),
  },
  {
    field: 'payments',
    restName: 'listPatientPayments',
    list: patientPayments,
    type: PaymentType,
    description: "The patient's payments and refunds, newest first by paidAt.",
    restDescription: "The patient's payments and refunds, newest first by paid_at.",
  },
];

registerChildFields(
  PatientType,
  records.map((r) => childListField(r.field, r.list)),
);

// ---------- Public (GraphQL) ----------

/**
 * What a query selects of each patient: on the patient, and on its records' `patient`, which is
 * the same patient (the records' pages attach it instead of reading it again).
 */
function patientSelection(info: GraphQLResolveInfo): ReadonlySet<string> {
  const node = ['edges', 'node'];
  return selectionUnion([
    selectedFields(info, node),
    ...records.map((r) => selectedFields(info, [...node, r.field, 'edges', 'node', 'patient'])),
  ]);
}

// Unions are memoised by their parts (each memoised per document), so views can be memoised on them.
const unions = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();
function selectionUnion(parts: ReadonlySet<string>[]): ReadonlySet<string> {
  let out = unions.get(parts[0]);
  if (!out) {
    out = new Set(parts.flatMap((p) => [...p]));
    unions.set(parts[0], out);
  }
  return out;
}

builder.queryFields((t) => ({
  patients: connectionField(t, PatientType, {
    subGraphs: ['Public'],
    nullable: true,
    authScopes: patientScopes,
    description: 'Patients (animals at veterinary clinics), oldest first. Same filters as GET /v1/patients.',
    args: {
      phone: t.arg.string({
        required: false,
        description: 'Separators ignored; local 0… or international form.',
      }),
      email: t.arg.string({ required: false, description: 'Case-insensitive exact match.' }),
      query: t.arg.string({ required: false, description: 'Prefix of first name, last name, or full name.' }),
    },
    resolve: async (_root, args, ctx, info) => {
      const view = viewOfSelection(Patient, patientSelection(info));
      const page = await listPatients(ctx, { ...args, ...relayPageArgs(args), view });
      await prefetchChildPages(ctx, info, page.items);
      return toConnection(page);
    },
  }),
  patient: t.field({
    type: PatientType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: patientScopes,
    description:
      'One patient (an animal at a veterinary clinic) with every field; null when the clinic has none with this id.',
    args: { id: t.arg.id({ required: true, description: 'The patient id (pat_…).' }) },
    resolve: async (_root, args, ctx) => {
      try {
        return await getPatient(ctx, String(args.id), viewFor(Patient, everyPatientField));
      } catch (e) {
        if (e instanceof AppError && e.code === 'not_found') return null;
        throw e;
      }
    },
  }),
}));

builder.objectFields(PatientType, (t) =>
  Object.fromEntries(
    records.map((r) => [
      r.field,
      connectionField(t, r.type, {
        subGraphs: ['Public'],
        // Nullable: a key without the scope still gets the patient, with this field null.
        nullable: true,
        authScopes: allOf(r.list.resource.scopes),
        description: r.description,
        ...(r.filterArgs ? { args: r.filterArgs(t, 'Public') } : {}),
        resolve: (p: Row, args: any, ctx: RequestContext, info: GraphQLResolveInfo) => {
          const planned = prefetchedPage(p, info);
          if (planned) return toConnection(planned);
          const view = viewOfSelection(r.list.resource, selectedFields(info, ['edges', 'node']));
          return withServiceArgs(args, async (a) =>
            toConnection(await recordsOfPatient(ctx, r.list, p, view, a)),
          );
        },
      }),
    ]),
  ),
);

// ---------- Rest (served under /v1: src/rest/direct.ts) ----------

const PatientPage = restPage('PatientPage', PatientType);
const PatientBody = restOne('PatientBody', PatientType);

builder.queryFields((t) => {
  const limitArgs = {
    limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
    cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
  };
  const include = t.arg({
    type: 'CommaList',
    required: false,
    description: `Veterinary clinics: ${includesOf(Patient).join(',')}.`,
  });
  const id = t.arg.string({ required: true, description: 'Patient id.' });
  const fields: Record<string, any> = {
    listPatients: t.field({
      type: PatientPage,
      subGraphs: ['Rest'],
      authScopes: patientScopes,
      description:
        'Patients (animals at veterinary clinics), oldest first, filtered by phone, email or a name prefix.',
      args: {
        phone: t.arg.string({ required: false }),
        email: t.arg.string({ required: false }),
        query: t.arg.string({ required: false }),
        ...limitArgs,
        response_format: t.arg.string({ required: false }),
        include,
      },
      resolve: async (_root, args, ctx) => {
        const view = viewFor(Patient, groupsOfRequest(args, includesOf(Patient)));
        return toRestPage(await listPatients(ctx, { ...args, view }));
      },
    }),
    getPatient: t.field({
      type: PatientBody,
      subGraphs: ['Rest'],
      authScopes: patientScopes,
      description:
        'One patient (an animal at a veterinary clinic), by its id; 404 when the clinic has none with it.',
      args: { id, response_format: t.arg.string({ required: false }), include },
      resolve: async (_root, args, ctx) => {
        const view = viewFor(Patient, groupsOfRequest(args, includesOf(Patient)));
        return { data: await getPatient(ctx, args.id, view) };
      },
    }),
  };
  for (const r of records) {
    fields[r.restName] = t.field({
      type: restPage(`${r.list.resource.name}Page`, r.type),
      subGraphs: ['Rest'],
      description: r.restDescription,
      authScopes: allOf([...Patient.scopes, ...r.list.resource.scopes]),
      args: { id, ...(r.filterArgs?.(t, 'Rest') ?? {}), ...limitArgs, include },
      resolve: async (_root: unknown, args: any, ctx: RequestContext) =>
        toRestPage(await listPatientRecords(ctx, r.list, args.id, args)),
    });
  }
  return fields;
});
