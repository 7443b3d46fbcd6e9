import { Migration } from '@mikro-orm/migrations';

/**
 * GET /v1/calls?patient_id=: a patient's calls newest first, served by (patient_id, started_at,
 * id) as the other records' patient filters are. `if not exists`: a database migrated during
 * development got it from an earlier draft of the calls migration.
 */
export class Migration20261128000001CallPatientIndex extends Migration {
  override up(): void {
    this.addSql(
      'create index if not exists "call_patient_id_started_at_id_index" on "call" ("patient_id", "started_at", "id")',
    );
  }

  override down(): void {
    this.addSql('drop index if exists "call_patient_id_started_at_id_index"');
  }
}
