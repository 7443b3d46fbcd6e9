import type pg from 'pg';

/**
 * The chat inbox of the bench clinic: 20,000 conversations with the clinic's owners' phones and
 * 100,000 messages (five a conversation, interleaved in time over about 90 days, both directions,
 * receipts on the outbound ones, an image now and then), numbered in time order like the app's
 * changes; each conversation's last_* times, preview and number from its messages. Written with
 * set-based SQL (seconds, not minutes) and reused on later runs.
 */
export const CONVERSATIONS = 20_000;
export const PER_CONVERSATION = 5;
const CLINIC_PHONE = '+97235559999';

export async function prepareChat(
  db: pg.Client,
  clinicId: number,
): Promise<{ messages: number; conversations: number; syncSince: string }> {
  const count = async (table: string) =>
    (await db.query(`select count(*)::int as n from "${table}" where clinic_id = $1`, [clinicId])).rows[0]
      .n as number;
  if ((await count('message')) < CONVERSATIONS * PER_CONVERSATION) {
    console.log(
      `seeding ${CONVERSATIONS.toLocaleString('en')} conversations and ${(CONVERSATIONS * PER_CONVERSATION).toLocaleString('en')} messages...`,
    );
    await db.query('begin');
    await db.query('delete from message where clinic_id = $1', [clinicId]);
    await db.query('delete from conversation where clinic_id = $1', [clinicId]);
    await db.query('update clinic set phone = $2 where id = $1 and phone is null', [clinicId, CLINIC_PHONE]);
    // Phones of the clinic's patients first (so pages match patients), then made-up ones.
    await db.query(
      `insert into conversation (clinic_id, patient_phone, clinic_phone, display_name, is_handled, seq, created_at, updated_at)
       select $1, phone, $2, case when n % 4 = 0 then null else 'Owner ' || n end, n % 5 = 0, 0, now(), now()
       from (
         select phone, row_number() over (order by first_id) as n from (
           select phone, min(id) as first_id from patient where clinic_id = $1 and phone is not null group by phone
           union all
           select '+97258' || lpad(g::text, 7, '0'), 1000000000 + g from generate_series(1, $3::int) g
         ) phones
       ) numbered where n <= $3`,
      [clinicId, CLINIC_PHONE, CONVERSATIONS],
    );
    await db.query(
      `insert into message (clinic_id, conversation_id, direction, type, from_phone, to_phone, patient_phone, text,
                            media_type, media_path, template_name, reaction_patient, reaction_clinic,
                            network_message_id, sent_at, delivered_at, read_at, seq, created_at, updated_at)
       select $1, c.id, d.direction, d.type,
              case when d.direction = 'inbound' then c.patient_phone else c.clinic_phone end,
              case when d.direction = 'inbound' then c.clinic_phone else c.patient_phone end,
              c.patient_phone,
              case when d.type = 'image' then null when d.direction = 'inbound' then 'Can I book for next week?' else 'Tuesday at 10:00 works.' end,
              case when d.type = 'image' then 'image' end,
              case when d.type = 'image' then 'med_bench' end,
              case when d.direction = 'outbound' and k = 1 then 'appointment_reminder' end,
              case when d.direction = 'outbound' and c.n % 9 = 0 then '👍' end,
              case when d.direction = 'inbound' and c.n % 11 = 0 then '❤️' end,
              'sbx_bench_' || c.id || '_' || k,
              case when d.direction = 'outbound' then t.at + interval '2 seconds' end,
              case when d.direction = 'outbound' then t.at + interval '20 seconds' end,
              case when d.direction = 'outbound' and c.n % 3 <> 0 then t.at + interval '60 seconds' end,
              t.seq, t.at,
              case when d.direction = 'outbound' then t.at + interval '60 seconds' else t.at end
       from (select id, patient_phone, clinic_phone, row_number() over (order by id) as n from conversation where clinic_id = $1) c
       cross join generate_series(0, $3::int - 1) k
       cross join lateral (select (k * $2::int + c.n) as seq,
                                  now() - interval '90 days' + (k * $2::int + c.n) * interval '77 seconds' as at) t
       cross join lateral (select case when k % 2 = 0 then 'inbound' else 'outbound' end as direction,
                                  case when k = 2 and c.n % 7 = 0 then 'image' else 'text' end as type) d`,
      [clinicId, CONVERSATIONS, PER_CONVERSATION],
    );
    await db.query(
      `update conversation c set last_activity_at = m.last_at, last_inbound_at = m.last_in, last_outbound_at = m.last_out,
              last_message_preview = coalesce(m.preview, '[image]'), seq = m.seq, created_at = m.first_at, updated_at = m.updated
       from (
         select conversation_id, max(created_at) as last_at, min(created_at) as first_at,
                max(created_at) filter (where direction = 'inbound') as last_in,
                max(created_at) filter (where direction = 'outbound') as last_out,
                (array_agg(text order by created_at desc))[1] as preview, max(seq) as seq, max(updated_at) as updated
         from message where clinic_id = $1 group by conversation_id
       ) m where m.conversation_id = c.id`,
      [clinicId],
    );
    await db.query(
      'update clinic set chat_seq = (select max(seq) from message where clinic_id = $1) where id = $1',
      [clinicId],
    );
    await db.query('commit');
    await db.query('vacuum analyze conversation, message');
  }
  // A sync page from the last thousand changes: what an integration polling every few minutes asks.
  const since = await db.query(
    `select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as t
     from message where clinic_id = $1 order by seq desc offset 1000 limit 1`,
    [clinicId],
  );
  return {
    messages: await count('message'),
    conversations: await count('conversation'),
    syncSince: since.rows[0].t,
  };
}
