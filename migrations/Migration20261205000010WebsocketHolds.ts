import { Migration } from '@mikro-orm/migrations';

/**
 * A key's websockets counted across instances (issue 35; docs/limits.md, Websockets;
 * src/server/websocket-holds.ts). One row per clinic, key and instance: how many of the key's
 * sockets that instance holds, and when it last said so (its heartbeat). Rows whose heartbeat is
 * older than the instance timeout belong to a dead instance and no longer count.
 *
 * Unlogged, as rate_limit: the rows are a cache of what the live instances hold, and every
 * instance writes its own again at each heartbeat, so a crash that empties the table is
 * repaired within one heartbeat. No entity: only the SQL of websocket-holds.ts reads and writes it.
 *
 * websocket_admit takes one socket's place in one statement, so one round trip even through a
 * transaction pooler: it serialises the key's admissions (a transaction-scoped advisory lock,
 * released at its commit), deletes the key's rows of dead instances, counts the live ones and
 * adds this instance's socket when the count is below the cap. Each statement of a plpgsql
 * function sees what committed before it began: the count taken after the lock is the truth.
 */
export class Migration20261205000010WebsocketHolds extends Migration {
  override up(): void {
    this.addSql(
      `create unlogged table "websocket_hold" ("clinic_id" int not null, "api_key_id" int not null, "instance_id" uuid not null, "sockets" int not null check ("sockets" >= 0), "seen_at" timestamptz not null, primary key ("clinic_id", "api_key_id", "instance_id"))`,
    );
    this.addSql('create index "websocket_hold_instance_id_index" on "websocket_hold" ("instance_id")');
    this.addSql(`create function "websocket_admit"(p_clinic int, p_key int, p_instance uuid, p_cap int, p_timeout_ms int)
returns int language plpgsql as $$
declare
  held int;
begin
  -- 'wsck': the lock space of a key's websockets (the second key is the key's id).
  perform pg_advisory_xact_lock(2004050795, p_key);
  delete from websocket_hold
    where clinic_id = p_clinic and api_key_id = p_key
      and seen_at < now() - make_interval(secs => p_timeout_ms / 1000.0);
  select coalesce(sum(sockets), 0) into held
    from websocket_hold where clinic_id = p_clinic and api_key_id = p_key;
  if held < p_cap then
    insert into websocket_hold (clinic_id, api_key_id, instance_id, sockets, seen_at)
      values (p_clinic, p_key, p_instance, 1, now())
      on conflict (clinic_id, api_key_id, instance_id)
      do update set sockets = websocket_hold.sockets + 1, seen_at = now();
  end if;
  return held;
end
$$`);
  }

  override down(): void {
    this.addSql('drop function "websocket_admit"(int, int, uuid, int, int)');
    this.addSql('drop table "websocket_hold"');
  }
}
