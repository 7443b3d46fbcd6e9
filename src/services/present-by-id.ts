import { readByIds } from '../db/list.ts';
import { entityNamed } from '../entities/index.ts';
import { type Groups, type Resource, type Row, standaloneView } from './resource.ts';
import type { WriteReader } from './unit-of-work.ts';

/**
 * A record as a GET of it answers, read through a write's own transaction (which sees what the
 * write has flushed but not committed) and presented for the reader's clinic. Every resource
 * presents this way, on its own: what lists of a parent attach (a record's patient) is read here.
 * Memoised per transaction, so an event and the write's answer present the object once.
 */
export async function presentById(
  reader: WriteReader,
  resource: Resource,
  id: number,
  groups: Groups,
): Promise<Row> {
  const key = `${resource.name}:${id}:${[...groups].join(',')}`;
  const known = reader.presented.get(key);
  if (known) return known;
  const view = standaloneView(resource, groups);
  const [row] = await readByIds(reader.em, entityNamed(resource.kind), view.read, [id]);
  if (!row) throw new Error(`${resource.name} ${id} vanished inside its own write.`);
  const presented = view.present(row, reader.principal);
  reader.presented.set(key, presented);
  return presented;
}
