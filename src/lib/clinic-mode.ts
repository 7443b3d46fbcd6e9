/**
 * Test mode, the way Stripe has it (docs/test-mode.md): a clinic is a test clinic or a live one,
 * for good, and its keys say which (`cg_test_…`, `cg_live_…`). What a request may reach follows
 * from its key's clinic, never from the process: the messaging network (the sandbox for test
 * clinics), the URLs the service fetches or delivers to (plain http and loopback for test clinics
 * only), and the sandbox's own tools (its mutations, the CLI's simulated patient and phone system,
 * sample events on demand).
 */
export const clinicModes = ['test', 'live'] as const;
export type ClinicMode = (typeof clinicModes)[number];

/** The prefix of a clinic's API keys: an integrator sees at a glance which mode a key acts in. */
export const keyPrefixOf = (mode: ClinicMode): string => `cg_${mode}_`;
