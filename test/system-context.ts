import type { ClinicMode } from '../src/lib/clinic-mode.ts';
import type { Clock } from '../src/lib/clock.ts';
import { authenticated, newRequest, type RequestContext } from '../src/lib/request-context.ts';
import type { AppDeps } from '../src/server/context.ts';

/**
 * A clinic's principal with the given scopes for calling services directly in tests (the event
 * hub's): the injected clock, no request, no rate limit.
 */
export function systemContext(
  deps: Pick<AppDeps, 'em' | 'services'>,
  opts: {
    clinicId: number;
    clinicKind: 'dental' | 'veterinary';
    /** Test by default, as the test helpers' clinics. */
    clinicMode?: ClinicMode;
    country: string;
    clock: Clock;
    scopes?: Iterable<string>;
  },
): RequestContext {
  const info = newRequest(opts.clock, () => {}, { clientAddress: 'system' });
  return authenticated(
    info,
    {
      keyId: 'system',
      clinicId: opts.clinicId,
      clinicKind: opts.clinicKind,
      clinicMode: opts.clinicMode ?? 'test',
      country: opts.country,
      scopes: new Set(opts.scopes ?? []),
    },
    deps.em,
    false,
    async () => {},
    () => true,
    deps.services,
  );
}
