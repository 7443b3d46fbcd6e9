/**
 * Resource definitions: the one place that says which fields a resource has, their types and
 * nullability, where each value comes from, which writes take it, which REST group carries it
 * and which scope guards the record. Everything else is derived from them: the presenter (row →
 * the resource JSON that /v1 returns, GraphQL reads and event `data` carries), the columns and
 * joins a read needs (db/lean.ts), REST pruning and the OpenAPI schemas (src/rest), the GraphQL
 * object types (src/schema/resource-types.ts), and the create and update inputs of the writes
 * (./write-inputs-of.ts). How to add one: docs/adding-a-resource.md.
 *
 * The mechanism is split by concern; this module is its one entry:
 * - ./resource-fields.ts: the field constructors and defineResource / defineShape;
 * - ./resource-groups.ts: REST groups (core, detailed, include:<name>);
 * - ./presenters.ts: row → resource JSON;
 * - ./read-plans.ts and ./views.ts: what a read reads and how it presents;
 * - ./resource-check.ts: the start-up check against the entities.
 */
export * from './presenters.ts';
export * from './read-plans.ts';
export * from './resource-check.ts';
export * from './resource-fields.ts';
export * from './resource-groups.ts';
export * from './views.ts';
