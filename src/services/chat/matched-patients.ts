import { leanFind } from '../../db/lean.ts';
import { textArray } from '../../db/list.ts';
import { Patient as PatientEntity } from '../../entities/index.ts';
import { toLocal } from '../../lib/phone.ts';
import type { ServiceContext } from '../../lib/request-context.ts';
import { CORE, defineResource, type Field, f, type Row, viewFor } from '../resource.ts';

/**
 * Conversations and messages carry no patient key: their `patients` are the patients whose phone
 * is the thread's, matched when read (spec: several on a shared number, or none). A list attaches
 * them, presented, for its whole page with one statement; the field gives what was attached.
 */
const ATTACHED = '$patients';

/** A patient as a thread shows it: who they are; their records are a patients:read matter. */
export const ChatPatient = defineResource({
  name: 'ChatPatient',
  kind: 'Patient',
  // Embedded in conversations and messages, whose scope guards them.
  scopes: [],
  description: 'A patient (an animal at veterinary clinics) whose phone is the thread’s.',
  fields: {
    id: f.id(),
    first_name: f.column('firstName', 'String', { nullable: true }),
    last_name: f.column('lastName', 'String', { nullable: true }),
    phone: f.column('phone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'Local form.',
    }),
  },
});

const summary = viewFor(ChatPatient, CORE);

export const MatchedPatients = {
  field: (phoneProp: string): Field =>
    f.derived(
      [phoneProp],
      [ChatPatient],
      (row) => {
        const list = row[ATTACHED] as Row[] | undefined;
        if (list === undefined) throw new Error(`patients were not attached to this ${phoneProp} row.`);
        return list;
      },
      {
        description:
          'Patients whose phone is this number, matched when read: several (a shared number) or none.',
      },
    ),

  /** Attaches each row's matched patients (oldest first), reading them in one statement. */
  async attach(ctx: ServiceContext, rows: Row[], phoneProp: string): Promise<void> {
    const phones = [...new Set(rows.map((r) => r[phoneProp]).filter((p): p is string => !!p))];
    const byPhone = new Map<string, Row[]>();
    if (phones.length) {
      const found = await leanFind<Row>(ctx.em, PatientEntity, {
        fields: summary.read.fields,
        joins: summary.read.joins,
        whereSql: { sql: 'e.phone = any(?::text[])', params: [textArray(phones)] },
        orderBy: [{ id: 'asc' }],
      });
      // Presented once each: the rows of a page that share a phone share its patients' objects.
      const pc = ctx.principal;
      for (const row of found) {
        const p = summary.present(row, pc);
        const list = byPhone.get(row.phone);
        if (list) list.push(p);
        else byPhone.set(row.phone, [p]);
      }
    }
    for (const r of rows) r[ATTACHED] = (r[phoneProp] && byPhone.get(r[phoneProp])) || [];
  },
};
