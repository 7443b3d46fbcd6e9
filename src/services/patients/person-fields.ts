import { f } from '../resource.ts';

/**
 * The fields a person has wherever the clinic records one: a patient, and an owner embedded in an
 * animal (Owner) or read on its own (Client). Defined once so the presentations cannot drift.
 */
export const personFields = {
  first_name: f.column('firstName', 'String', {
    nullable: true,
    description: 'First name; null when not recorded.',
  }),
  last_name: f.column('lastName', 'String', {
    nullable: true,
    description: 'Last (family) name; null when not recorded.',
  }),
  email: f.column('email', 'String', {
    nullable: true,
    description: 'Email address; null when not recorded.',
  }),
};
