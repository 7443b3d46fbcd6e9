import { Migration } from '@mikro-orm/migrations';

/**
 * The shared rate-limit counters (src/auth/rate-limit.ts; rate-limiter-flexible's Postgres
 * layout). Unlogged: counters of the last few seconds are not worth a WAL record per request,
 * and losing them in a crash only resets the windows.
 */
export class Migration20261123000000RateLimit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create unlogged table "rate_limit" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint)',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table "rate_limit"');
  }
}
