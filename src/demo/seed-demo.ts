import type { EntityManager } from '@mikro-orm/postgresql';
import { createApiKey } from '../auth/keys.ts';
import { readScopes, writeScopes } from '../auth/scopes.ts';
import type { Clinic } from '../entities/clinic.ts';
import { toId } from '../lib/ids.ts';
import { createClinic } from '../services/clinics/clinics.ts';
import { Rng, seedOf } from './random.ts';
import { seedCalls } from './seed-calls.ts';
import { seedChat } from './seed-chat.ts';
import { ClinicSeeder } from './seed-clinic.ts';
import { seedWorkingHours } from './seed-working-hours.ts';

export interface DemoKey {
  id: string;
  key: string;
  clinic_id: string;
}

/** The keys the demo seed makes (and the start banner and `cli seed` print), by role. */
export const DEMO_KEY_ROLES = ['readAll', 'chatWrite', 'vetReadAll', 'clinicWrite'] as const;

/** The demo clinics' time zone (both are in Israel). */
export const DEMO_TIMEZONE = 'Asia/Jerusalem';

export interface DemoResult {
  clinics: { id: string; name: string; kind: string }[];
  keys: Record<(typeof DEMO_KEY_ROLES)[number], DemoKey>;
}

const _DAY = 86_400_000;

/**
 * Seeds a dental and a veterinary clinic with a full, realistic data set and four API keys, in
 * one transaction (a half-seeded demo is worse than none). Everything except the keys comes from
 * a seeded PRNG and every date is an offset from the start of `now`'s day (UTC), so two runs on
 * the same day write the same rows; the price is that an appointment later today counts as
 * upcoming. No events are written: this is a data load, not activity to announce.
 */
export async function seedDemo(
  em: EntityManager,
  opts: { patientsPerClinic?: number; now?: Date } = {},
): Promise<DemoResult> {
  const perClinic = opts.patientsPerClinic ?? 40;
  const now = opts.now ?? new Date();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

  return em.transactional(async (tx) => {
    const dental = await createClinic(tx, {
      name: 'Smile Dental',
      kind: 'dental',
      // The demo's clinics are test clinics (docs/test-mode.md): cg_test_ keys, the sandbox network.
      mode: 'test',
      country: 'IL',
      phone: '052-555-0142',
      handledMarkingEnabled: true,
      timezone: DEMO_TIMEZONE,
    });
    const vet = await createClinic(tx, {
      name: 'Happy Paws Veterinary',
      kind: 'veterinary',
      mode: 'test',
      country: 'IL',
      phone: '04-855-0177',
      timezone: DEMO_TIMEZONE,
    });

    for (const clinic of [dental, vet]) {
      const seeder = new ClinicSeeder(tx, clinic, new Rng(seedOf(clinic.kind === 'dental' ? 1 : 2)), today);
      seeder.run(perClinic);
      await tx.flush();
      // Refunds point at payments of the same table: created after those are stored, so MikroORM
      // inserts them as they are instead of patching refund_of (and updated_at) afterwards.
      seeder.createRefunds();
      await tx.flush();
      await seedChat(tx, clinic, new Rng(seedOf(clinic.kind === 'dental' ? 3 : 4)), now);
      await seedCalls(tx, clinic, new Rng(seedOf(clinic.kind === 'dental' ? 5 : 6)), now);
      await seedWorkingHours(tx, clinic);
    }

    const key = async (clinic: Clinic, name: string, scopes: string[]): Promise<DemoKey> => {
      const k = await createApiKey(tx, { clinicId: clinic.id, name, scopes });
      return { id: k.id, key: k.key, clinic_id: k.clinic_id };
    };
    return {
      clinics: [dental, vet].map((c) => ({ id: toId('Clinic', c.id), name: c.name, kind: c.kind })),
      keys: {
        // chat:write can never sit beside chat:read, so "everything" is split over two keys. As the
        // README lists them, webhooks:manage (subscriptions, the event log) goes with the writes.
        readAll: await key(dental, 'Demo: read everything', [...readScopes]),
        chatWrite: await key(dental, 'Demo: send chat messages', ['chat:write']),
        vetReadAll: await key(vet, 'Demo: read everything', [...readScopes]),
        clinicWrite: await key(dental, 'Demo: clinic writes and events', [
          ...readScopes,
          ...writeScopes,
          'webhooks:manage',
        ]),
      },
    };
  });
}
