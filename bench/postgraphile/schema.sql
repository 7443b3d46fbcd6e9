-- PostGraphile's view of the bench clinic (bench/postgraphile/server.ts serves schema bench_pg):
-- each view is one of the app's tables with only the columns the cases read and the clinic filter
-- the app applies (the clinic of the request's API key, set per request as bench.clinic_id), so
-- PostGraphile does the same work as the app. Smart comments give the views their keys and
-- relations. Recreated on every run (cheap), so a change here needs no migration.
drop schema if exists bench_pg cascade;
create schema bench_pg;

create function bench_pg.clinic() returns int language sql stable as
  $$ select nullif(current_setting('bench.clinic_id', true), '')::int $$;
comment on function bench_pg.clinic() is E'@behavior -*';

create view bench_pg.patient_status as
  select id, name, color from public.patient_status where clinic_id = bench_pg.clinic();
comment on view bench_pg.patient_status is E'@primaryKey id';

create view bench_pg.species as
  select id, name from public.species where clinic_id = bench_pg.clinic();
comment on view bench_pg.species is E'@primaryKey id';

create view bench_pg.owner as
  select id, first_name, last_name, phone, email from public.owner where clinic_id = bench_pg.clinic();
comment on view bench_pg.owner is E'@primaryKey id';

create view bench_pg.patient as
  select id, first_name, last_name, phone, email, gender, birth_date, status_id, owner_id, species_id,
         name_fl, name_lf, created_at, updated_at
  from public.patient where clinic_id = bench_pg.clinic();
comment on view bench_pg.patient is E'@primaryKey id\n@foreignKey (status_id) references bench_pg.patient_status (id)\n@foreignKey (owner_id) references bench_pg.owner (id)\n@foreignKey (species_id) references bench_pg.species (id)';

create view bench_pg.appointment_status as
  select id, name, color from public.appointment_status where clinic_id = bench_pg.clinic();
comment on view bench_pg.appointment_status is E'@primaryKey id';

create view bench_pg.appointment as
  select id, patient_id, status_id, start_at, end_at from public.appointment where clinic_id = bench_pg.clinic();
comment on view bench_pg.appointment is E'@primaryKey id\n@foreignKey (patient_id) references bench_pg.patient (id)\n@foreignKey (status_id) references bench_pg.appointment_status (id)';

-- The REST name search: a prefix of "first last" or "last first", folded as the app folds it
-- (the bench sends an already folded prefix, as its name prefix is read from name_fl).
create function bench_pg.search_patients(prefix text) returns setof bench_pg.patient language sql stable as $$
  select * from bench_pg.patient p
  where p.name_fl like replace(replace(replace(prefix, '\', '\\'), '%', '\%'), '_', '\_') || '%'
     or p.name_lf like replace(replace(replace(prefix, '\', '\\'), '%', '\%'), '_', '\_') || '%'
  order by p.id
$$;

create view bench_pg.message as
  select id, conversation_id, direction, type, from_phone, to_phone, patient_phone, text, media_type,
         template_name, replied_to_id, reaction_patient, reaction_clinic, failure_reason, sent_at,
         delivered_at, read_at, failed_at, seq, created_at, updated_at
  from public.message where clinic_id = bench_pg.clinic();
comment on view bench_pg.message is E'@primaryKey id';

create view bench_pg.conversation as
  select id, clinic_phone, patient_phone, display_name, last_message_preview, last_activity_at,
         last_inbound_at, last_outbound_at, is_handled, created_at, updated_at
  from public.conversation where clinic_id = bench_pg.clinic();
comment on view bench_pg.conversation is E'@primaryKey id';

-- A chat row's patients: the clinic's patients with the row's phone, as the app attaches them.
create function bench_pg.message_patients(m bench_pg.message) returns setof bench_pg.patient language sql stable as
  $$ select * from bench_pg.patient p where p.phone = m.patient_phone order by p.id $$;
create function bench_pg.conversation_patients(c bench_pg.conversation) returns setof bench_pg.patient language sql stable as
  $$ select * from bench_pg.patient p where p.phone = c.patient_phone order by p.id $$;

-- The inbox in the app's order, most recent activity first with the never active last: Amber's
-- LAST_ACTIVITY_AT_DESC is PostgreSQL's DESC (nulls first), which the app's index does not serve
-- (a sort of every conversation per request).
create function bench_pg.recent_conversations() returns setof bench_pg.conversation language sql stable as
  $$ select * from bench_pg.conversation c order by c.last_activity_at desc nulls last, c.id desc $$;

-- The chat sync page: the changes since a time, in change order (the app's statement's condition).
create function bench_pg.messages_since(since timestamptz) returns setof bench_pg.message language sql stable as $$
  select * from bench_pg.message e
  where e.updated_at >= since
    and e.seq >= coalesce((select s.seq from public.message s where s.clinic_id = bench_pg.clinic()
                           and s.updated_at >= since order by s.updated_at, s.seq limit 1), 0)
  order by e.seq, e.id
$$;
