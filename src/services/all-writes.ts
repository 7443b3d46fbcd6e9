/**
 * Loads every write definition (each module registers its writes with `defineWrite`), so the
 * routes, the schema and the OpenAPI document see them all. A new write module is added here.
 */
import './appointments/appointment-writes.ts';

export { allWrites } from './writes.ts';
