import { Migration } from '@mikro-orm/migrations';

/**
 * The event relay (src/services/events/relay.ts): every committed outbox row is announced on
 * `event_recorded` as `<clinic_id>:<event_id>`. Ids only, because a NOTIFY payload must stay
 * under 8000 bytes and `data` can be larger; listeners read the row back. NOTIFY is
 * transactional: a rolled-back write announces nothing, a committed one is heard after commit.
 * A trigger, not a statement of the app's: the writes' SQL stays what it was (test/bench-sql).
 */
export class Migration20261129000000EventNotify extends Migration {
  override up(): void {
    this.addSql(`create or replace function "event_notify"() returns trigger language plpgsql as $$
begin
  perform pg_notify('event_recorded', new.clinic_id::text || ':' || new.id::text);
  return null;
end
$$`);
    this.addSql(
      'create trigger "event_notify_after_insert" after insert on "event" for each row execute function "event_notify"()',
    );
  }

  override down(): void {
    this.addSql('drop trigger if exists "event_notify_after_insert" on "event"');
    this.addSql('drop function if exists "event_notify"()');
  }
}
