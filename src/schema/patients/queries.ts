import type { GraphQLResolveInfo } from 'graphql';
import { AppError } from '../../lib/errors.ts';
import { encodeCursor, type Page, parseLimit } from '../../lib/pagination.ts';
import { appointmentReadFor } from '../../services/patients/batch.ts';
import { parseInclude, parseResponseFormat } from '../../services/patients/include.ts';
import { getPatient, listPatients, patientKeyset } from '../../services/patients/patients.ts';
import {
  appointmentKeyset,
  listPatientAppointments,
  listPatientPayments,
  listPatientTreatments,
  paymentKeyset,
  treatmentKeyset,
} from '../../services/patients/records.ts';
import {
  LINKS,
  type PartialAppointmentData,
  presentAppointment,
  presentPatient,
  presentPayment,
  presentTreatment,
} from '../../services/presenters.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { selectedFields } from '../selection.ts';
import { restOne, restPage, toConnection, toRestPage } from '../shared.ts';
import { AppointmentType, PatientType, PaymentType, TreatmentType } from './types.ts';

const forwardOnly = (args: { last?: number | null; before?: string | null }) => {
  if (args.last != null || args.before != null) {
    throw new AppError('validation_failed', 'Only forward pagination (first, after) is supported.', {
      param: 'last',
    });
  }
};

const relayArgs = (args: { first?: number | null; after?: string | null }) => ({
  limit: args.first ?? undefined,
  cursor: args.after ?? undefined,
  limitParam: 'first',
  cursorParam: 'after',
});

// ---------- Public (GraphQL) ----------

builder.queryFields((t) => ({
  patients: t.connection({
    type: PatientType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: { 'patients:read': true },
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
      forwardOnly(args);
      // Read what the query selects of each patient, owner and species joined into the page's
      // statement (as REST's include does). A patient is also its appointments' `patient`
      // (see Patient.appointments), so what the query selects there is read too.
      const select = new Set([
        ...selectedFields(info, ['edges', 'node']),
        ...selectedFields(info, ['edges', 'node', 'appointments', 'edges', 'node', 'patient']),
      ]);
      const include = { owner: select.has('owner'), species: select.has('species') };
      const page = await listPatients(ctx.svc, { ...args, ...relayArgs(args), include, select });
      return toConnection(
        page,
        (p) => presentPatient(p, ctx.principal, include),
        (p) => encodeCursor(patientKeyset, p),
      );
    },
  }),
  patient: t.field({
    type: PatientType,
    subGraphs: ['Public'],
    nullable: true,
    authScopes: { 'patients:read': true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      try {
        return presentPatient(await getPatient(ctx.svc, String(args.id)), ctx.principal);
      } catch (e) {
        if (e instanceof AppError && e.code === 'not_found') return null;
        throw e;
      }
    },
  }),
}));

/**
 * The first page of many patients' appointments is one batched query (see loaders), reading only
 * what the query selects of each appointment.
 */
async function appointmentsPage(
  patientId: number,
  publicId: string,
  args: any,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
): Promise<Page<PartialAppointmentData>> {
  if (args.after == null) {
    const limit = parseLimit(args.first ?? undefined, 'first');
    const read = appointmentReadFor(selectedFields(info, ['edges', 'node']));
    const rows = await ctx.loaders.firstAppointments(limit + 1, read).load(patientId);
    const items = rows.slice(0, limit);
    return {
      items,
      nextCursor: rows.length > limit ? encodeCursor(appointmentKeyset, items[items.length - 1]) : null,
    };
  }
  return listPatientAppointments(ctx.svc, publicId, relayArgs(args));
}

builder.objectFields(PatientType, (t) => ({
  appointments: t.connection({
    type: AppointmentType,
    subGraphs: ['Public'],
    // Nullable: a key without the scope still gets the patient, with this field null.
    nullable: true,
    authScopes: { 'appointments:read': true },
    description: 'Newest first.',
    resolve: async (p, args, ctx, info) => {
      forwardOnly(args);
      const page = await appointmentsPage(p[LINKS].patientId, p.id, args, ctx, info);
      return toConnection(
        page,
        (a) => presentAppointment(a, ctx.principal, undefined, p),
        (a) => encodeCursor(appointmentKeyset, a),
      );
    },
  }),
  treatments: t.connection({
    type: TreatmentType,
    subGraphs: ['Public'],
    // Nullable: a key without the scope still gets the patient, with this field null.
    nullable: true,
    authScopes: { 'treatments:read': true },
    description: 'Newest first.',
    args: { appointment_id: t.arg.string({ required: false }) },
    resolve: async (p, args, ctx) => {
      forwardOnly(args);
      const page = await listPatientTreatments(ctx.svc, p.id, {
        ...relayArgs(args),
        appointmentId: args.appointment_id,
      });
      return toConnection(
        page,
        (x) => presentTreatment(x, ctx.principal),
        (x) => encodeCursor(treatmentKeyset, x),
      );
    },
  }),
  payments: t.connection({
    type: PaymentType,
    subGraphs: ['Public'],
    // Nullable: a key without the scope still gets the patient, with this field null.
    nullable: true,
    authScopes: { 'payments:read': true },
    description: 'Payments and refunds, newest first.',
    resolve: async (p, args, ctx) => {
      forwardOnly(args);
      const page = await listPatientPayments(ctx.svc, p.id, relayArgs(args));
      return toConnection(
        page,
        (x) => presentPayment(x, ctx.principal),
        (x) => encodeCursor(paymentKeyset, x),
      );
    },
  }),
}));

// ---------- Rest (consumed by SOFA under /v1) ----------

const PatientPage = restPage('PatientPage', PatientType);
const PatientBody = restOne('PatientBody', PatientType);
const AppointmentPage = restPage('AppointmentPage', AppointmentType);
const TreatmentPage = restPage('TreatmentPage', TreatmentType);
const PaymentPage = restPage('PaymentPage', PaymentType);

builder.queryFields((t) => {
  const limitArgs = {
    limit: t.arg({ type: 'Limit', required: false, description: 'Page size, 1 to 100 (default 25).' }),
    cursor: t.arg.string({ required: false, description: 'next_cursor of the previous page, verbatim.' }),
  };
  const include = t.arg({
    type: 'CommaList',
    required: false,
    description: 'Veterinary clinics: owner,species.',
  });
  const id = t.arg.string({ required: true, description: 'Patient id.' });
  return {
    listPatients: t.field({
      type: PatientPage,
      subGraphs: ['Rest'],
      authScopes: { 'patients:read': true },
      args: {
        phone: t.arg.string({ required: false }),
        email: t.arg.string({ required: false }),
        query: t.arg.string({ required: false }),
        ...limitArgs,
        response_format: t.arg.string({ required: false }),
        include,
      },
      resolve: async (_root, args, ctx) => {
        const inc = parseInclude(args.include);
        const detailed = parseResponseFormat(args.response_format) === 'detailed';
        const page = await listPatients(ctx.svc, { ...args, include: inc, detailed });
        return toRestPage(page, (p) => presentPatient(p, ctx.principal, inc));
      },
    }),
    getPatient: t.field({
      type: PatientBody,
      subGraphs: ['Rest'],
      authScopes: { 'patients:read': true },
      args: { id, response_format: t.arg.string({ required: false }), include },
      resolve: async (_root, args, ctx) => {
        const inc = parseInclude(args.include);
        parseResponseFormat(args.response_format);
        return { data: presentPatient(await getPatient(ctx.svc, args.id, inc), ctx.principal, inc) };
      },
    }),
    listPatientAppointments: t.field({
      type: AppointmentPage,
      subGraphs: ['Rest'],
      authScopes: { $all: { 'patients:read': true, 'appointments:read': true } },
      args: { id, ...limitArgs, include },
      resolve: async (_root, args, ctx) => {
        const inc = parseInclude(args.include);
        const page = await listPatientAppointments(ctx.svc, args.id, { ...args, include: inc });
        return toRestPage(page, (a) => presentAppointment(a, ctx.principal, inc));
      },
    }),
    listPatientTreatments: t.field({
      type: TreatmentPage,
      subGraphs: ['Rest'],
      authScopes: { $all: { 'patients:read': true, 'treatments:read': true } },
      args: { id, appointment_id: t.arg.string({ required: false }), ...limitArgs, include },
      resolve: async (_root, args, ctx) => {
        const inc = parseInclude(args.include);
        const page = await listPatientTreatments(ctx.svc, args.id, {
          ...args,
          appointmentId: args.appointment_id,
          include: inc,
        });
        return toRestPage(page, (x) => presentTreatment(x, ctx.principal, inc));
      },
    }),
    listPatientPayments: t.field({
      type: PaymentPage,
      subGraphs: ['Rest'],
      authScopes: { $all: { 'patients:read': true, 'payments:read': true } },
      args: { id, ...limitArgs, include },
      resolve: async (_root, args, ctx) => {
        const inc = parseInclude(args.include);
        const page = await listPatientPayments(ctx.svc, args.id, { ...args, include: inc });
        return toRestPage(page, (x) => presentPayment(x, ctx.principal, inc));
      },
    }),
  };
});
