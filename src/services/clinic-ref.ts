import { Clinic } from '../entities/index.ts';
import type { Write } from './unit-of-work.ts';

/** A reference to the writing clinic, for the rows a write creates. */
export const clinicRef = (w: Pick<Write, 'em' | 'clinicId'>) => w.em.getReference(Clinic, w.clinicId);
