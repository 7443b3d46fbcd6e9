import { leanFind } from '../../db/lean.ts';
import { textArray } from '../../db/list.ts';
import { Patient as PatientEntity } from '../../entities/index.ts';
import { toLocal } from '../../lib/phone.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { CORE, defineResource, type Field, f, type PresentContext, type Row, viewFor } from '../resource.ts';

/**
 * Conversations and messages carry no patient key: their `patients` are the patients whose phone
 * is the thread's, matched when read (spec: several on a shared number, or none). A list reads
 * them for its whole page with one statement, presented once each, and presents its rows with a
 * context that holds them by phone (the rows themselves are left as read: a property added to
 * each row cost more allocation than the rest of the page's reading, measured).
 */
export interface MatchedContext extends PresentContext {
  matched: ReadonlyMap<string, Row[]>;
}

/** A patient as a thread shows it: who they are; their records are a patients:read matter. */
export const ChatPatient = defineResource({
  name: 'ChatPatient',
  kind: 'Patient',
  // Embedded in conversations and messages, whose scope guards them.
  scopes: [],
  description: 'A patient (an animal at veterinary clinics) whose phone is the thread’s.',
  fields: {
    id: f.id({ description: "The patient's id (pat_<n>)." }),
    first_name: f.column('firstName', 'String', { nullable: true, description: "The patient's first name." }),
    last_name: f.column('lastName', 'String', { nullable: true, description: "The patient's last name." }),
    phone: f.column('phone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'Local form.',
    }),
  },
});

const summary = viewFor(ChatPatient, CORE);
const NONE: Row[] = [];

export const MatchedPatients = {
  field: (phoneProp: string): Field =>
    f.derived(
      [phoneProp],
      [ChatPatient],
      (row, pc) => {
        const matched = (pc as Partial<MatchedContext>).matched;
        if (!matched) throw new Error(`${phoneProp} rows are presented with MatchedPatients.context.`);
        return matched.get(row[phoneProp]) ?? NONE;
      },
      {
        description:
          'Patients whose phone is this number, matched when read: several (a shared number) or none.',
      },
    ),

  /** The context to present `rows` with: their matched patients (oldest first), read in one statement. */
  async context(ctx: ServiceContext, rows: readonly Row[], phoneProp: string): Promise<MatchedContext> {
    const phones = [...new Set(rows.map((r) => r[phoneProp]).filter((p): p is string => !!p))];
    const byPhone = new Map<string, Row[]>();
    if (phones.length) {
      const found = await leanFind<Row>(readsOf(ctx), PatientEntity, {
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
    return { ...ctx.principal, matched: byPhone };
  },
};
