import { f } from '../resource.ts';

/**
 * The fields an owner has wherever it is presented: embedded in an animal (Owner) and read on
 * its own (Client), the same row; defined once so the two cannot drift.
 */
export const ownerNameAndEmail = {
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
