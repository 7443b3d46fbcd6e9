import { Migration } from '@mikro-orm/migrations';

/**
 * Email columns as long as the write inputs take (320, RFC 5321): a longer address than the
 * varchar(255) held reached the database and answered 500 (issue 36; test/write-limits.test.ts).
 */
export class Migration20261206000000EmailLength extends Migration {
  override up(): void {
    this.addSql(
      'alter table "patient" alter column "email" type varchar(320), alter column "email_lower" type varchar(320)',
    );
    this.addSql('alter table "owner" alter column "email" type varchar(320)');
  }
}
