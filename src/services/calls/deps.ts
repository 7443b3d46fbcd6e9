import type { ClinicMode } from '../../lib/clinic-mode.ts';
/**
 * What the call services talk to besides the database: call recordings through src/media (wired
 * in src/server/call-deps.ts; the CLI wires its own).
 */
export interface CallDeps {
  recordings: {
    /**
     * Downloads a recording from the phone system's `url` (https, SSRF-guarded, size cap, type
     * sniffed: audio only; 422s name `url`) and keeps the service's own copy: its store key and type.
     */
    /** `mode`: the clinic's, the URL policy of the download (src/lib/address-policy.ts). */
    keep(clinicId: number, mode: ClinicMode, url: string): Promise<{ key: string; mime: string }>;
    /** A signed link to a kept recording, valid about 10 hours. */
    link(clinicId: number, key: string, filename: string, mime: string): { url: string; expires_at: string };
  };
}

declare module '../../lib/request-context.ts' {
  interface AppServices {
    calls: CallDeps;
  }
}
