import DataLoader from 'dataloader';
import type { ServiceContext } from '../services/context.ts';
import {
  type AppointmentRead,
  firstAppointmentsOfPatients,
  ownersByIds,
  speciesByIds,
} from '../services/patients/batch.ts';
import type { OwnerData, PartialAppointmentData } from '../services/presenters.ts';

/** Per-request batchers, so nested GraphQL fields cost one statement per level, not one per row. */
export interface Loaders {
  owner: DataLoader<number, OwnerData | null>;
  species: DataLoader<number, { id: number; name: string } | null>;
  /** The first `n` appointments of patients, reading `read` (one loader per page size and read set). */
  firstAppointments: (n: number, read: AppointmentRead) => DataLoader<number, PartialAppointmentData[]>;
}

export function createLoaders(svc: ServiceContext): Loaders {
  const byN = new Map<string, DataLoader<number, PartialAppointmentData[]>>();
  return {
    owner: new DataLoader((ids) => ownersByIds(svc.em, ids)),
    species: new DataLoader((ids) => speciesByIds(svc.em, ids)),
    firstAppointments: (n, read) => {
      const key = `${n}|${read.key}`;
      let l = byN.get(key);
      if (!l) {
        l = new DataLoader((ids) => firstAppointmentsOfPatients(svc.em, ids, n, read));
        byN.set(key, l);
      }
      return l;
    },
  };
}
