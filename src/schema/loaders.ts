import DataLoader from 'dataloader';
import type { ServiceContext } from '../services/context.ts';
import { firstAppointmentsOfPatients, ownersByIds, speciesByIds } from '../services/patients/batch.ts';
import type { AppointmentData, OwnerData } from '../services/presenters.ts';

/** Per-request batchers, so nested GraphQL fields cost one statement per level, not one per row. */
export interface Loaders {
  owner: DataLoader<number, OwnerData | null>;
  species: DataLoader<number, { id: number; name: string } | null>;
  firstAppointments: (n: number) => DataLoader<number, AppointmentData[]>;
}

export function createLoaders(svc: ServiceContext): Loaders {
  const byN = new Map<number, DataLoader<number, AppointmentData[]>>();
  return {
    owner: new DataLoader((ids) => ownersByIds(svc.em, ids)),
    species: new DataLoader((ids) => speciesByIds(svc.em, ids)),
    firstAppointments: (n) => {
      let l = byN.get(n);
      if (!l) {
        l = new DataLoader((ids) => firstAppointmentsOfPatients(svc.em, ids, n));
        byN.set(n, l);
      }
      return l;
    },
  };
}
