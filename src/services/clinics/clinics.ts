import type { EntityManager } from '@mikro-orm/postgresql';
import { systemWrite } from '../../db/system-write.ts';
import { Clinic, type ClinicKind, clinicKinds } from '../../entities/clinic.ts';
import { type ClinicMode, clinicModes } from '../../lib/clinic-mode.ts';
import { AppError } from '../../lib/errors.ts';
import { toId } from '../../lib/ids.ts';
import { isPhoneCountry, toE164 } from '../../lib/phone.ts';
import { clockNow } from '../../lib/request-context.ts';
import { clinicWrite } from '../unit-of-work.ts';

/**
 * A new clinic (the CLI's `clinic create`, the demo seed): a system write, not a clinic's
 * (src/db/system-write.ts), since there is no clinic yet to bind the unit of work to.
 */
export async function createClinic(
  em: EntityManager,
  input: {
    name: string;
    kind: string;
    /** Test or live, for good (docs/test-mode.md): no default, the choice is always made on purpose. */
    mode: string;
    country: string;
    phone?: string | null;
    handledMarkingEnabled?: boolean;
    timezone?: string;
  },
): Promise<Clinic> {
  if (!input.name?.trim()) throw new AppError('validation_failed', 'name is required.', { param: 'name' });
  if (!(clinicKinds as readonly string[]).includes(input.kind)) {
    throw new AppError('validation_failed', `kind must be one of ${clinicKinds.join(', ')}.`, {
      param: 'kind',
    });
  }
  if (!(clinicModes as readonly string[]).includes(input.mode)) {
    throw new AppError('validation_failed', `mode must be one of ${clinicModes.join(', ')}.`, {
      param: 'mode',
    });
  }
  const country = input.country?.toUpperCase();
  if (!isPhoneCountry(country ?? '')) {
    throw new AppError('validation_failed', 'country must be an ISO 3166 alpha-2 country code, e.g. IL.', {
      param: 'country',
    });
  }
  const phone = input.phone ? toE164(input.phone, country) : null;
  if (input.phone && !phone)
    throw new AppError('validation_failed', 'phone is not a valid number.', { param: 'phone' });
  return systemWrite(em, async (tx) =>
    tx.create(Clinic, {
      name: input.name.trim(),
      kind: input.kind as ClinicKind,
      mode: input.mode as ClinicMode,
      country,
      phone,
      timezone: input.timezone ?? 'UTC',
      handledMarkingEnabled: input.handledMarkingEnabled ?? false,
      aiTranscriptionEnabled: false,
      createdAt: new Date(),
      updatedAt: new Date(),
    }),
  );
}

export async function listClinics(em: EntityManager) {
  const rows = await em.find(Clinic, {}, { orderBy: { id: 'asc' } });
  return rows.map((c) => ({
    id: toId('Clinic', c.id),
    name: c.name,
    kind: c.kind,
    mode: c.mode,
    country: c.country,
    phone: c.phone,
  }));
}

/**
 * Changes a clinic's settings (the CLI's `clinic update`): a write of that clinic, in its unit of
 * work. It records no event: the catalog has none for a clinic's settings.
 */
export async function updateClinic(
  em: EntityManager,
  id: number,
  input: { handledMarkingEnabled?: boolean; aiTranscriptionEnabled?: boolean },
): Promise<Clinic> {
  return clinicWrite(em, id, clockNow(), async (w) => {
    const clinic = await w.em.findOne(Clinic, id);
    if (!clinic) throw new AppError('not_found', `No clinic with id '${toId('Clinic', id)}'.`);
    if (input.handledMarkingEnabled !== undefined) clinic.handledMarkingEnabled = input.handledMarkingEnabled;
    if (input.aiTranscriptionEnabled !== undefined)
      clinic.aiTranscriptionEnabled = input.aiTranscriptionEnabled;
    return clinic;
  });
}
