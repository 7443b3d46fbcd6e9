import { f } from '../resource.ts';
import { name, text, z } from '../write-input.ts';

/** The longest name a write takes. */
export const NAME_MAX = 100;

/**
 * The fields a person has wherever the clinic records one: a patient, and an owner embedded in an
 * animal (Owner) or read on its own (Client). Defined once so the presentations cannot drift.
 * Their writes' `run` stores them: a name is folded for search beside it (and a person keeps one
 * of the two), a patient's email is lower-cased beside it.
 */
export const personFields = {
  first_name: f.column('firstName', 'String', {
    nullable: true,
    description: 'First name; null when not recorded.',
    write: {
      on: 'both',
      input: name(NAME_MAX),
      description: 'First name, up to 100 characters; a first or a last name is required.',
      byRun: true,
    },
  }),
  last_name: f.column('lastName', 'String', {
    nullable: true,
    description: 'Last (family) name; null when not recorded.',
    write: {
      on: 'both',
      input: name(NAME_MAX),
      description: 'Last (family) name, up to 100 characters.',
      byRun: true,
      kinds: ['person'],
    },
  }),
  email: f.column('email', 'String', {
    nullable: true,
    description: 'Email address; null when not recorded.',
    write: {
      on: 'both',
      input: z.email().max(320),
      description: 'Email address.',
      byRun: true,
      kinds: ['person'],
    },
  }),
};

/** A person's phone, stored in E.164 read with the clinic's country (`run` converts it). */
export const phoneWrite = {
  on: 'both',
  input: text(40),
  description: 'Local (0501234567) or international (+972…) form.',
  byRun: true,
  // An animal carries its owner's phone and email (copyOwnerContact), never its own.
  kinds: ['person'],
} as const;
