import type { ClinicMode } from '../../lib/clinic-mode.ts';
import { AppError } from '../../lib/errors.ts';

/**
 * The one check of the sandbox's tools (docs/test-mode.md): the sandbox mutations, sample events
 * on demand (`POST /v1/events`, `cli events trigger`) and the CLI's simulated patient and phone
 * system act for test clinics only, so nothing made up ever reaches a live clinic's patients,
 * records or receivers. `what` names the tool in the refusal.
 */
export function requireTestClinic(mode: ClinicMode, what: string): void {
  if (mode !== 'test')
    throw new AppError(
      'test_mode_only',
      `${what} is for test clinics only, and this clinic is live (its keys start cg_live_). Use a test clinic's key (cg_test_…); docs/test-mode.md.`,
    );
}
