import { detailedPatientFields } from '../services/presenters.ts';

/**
 * SOFA selects every field of a route's type. What the request did not ask for is removed here:
 * the detailed patient fields unless response_format=detailed, and owner/species unless included.
 * Keys are left out of the JSON (absent), not nulled.
 */
const patientRoutes = new Set(['listPatients', 'getPatient']);
const recordRoutes = new Set(['listPatientAppointments', 'listPatientTreatments', 'listPatientPayments']);

function includes(raw: unknown): Set<string> {
  const values = Array.isArray(raw) ? raw : raw == null ? [] : [raw];
  return new Set(values.flatMap((v) => String(v).split(',')).map((s) => s.trim()));
}

// Set to undefined rather than deleted: JSON leaves the key out all the same, and `delete` turned
// every row into a slow dictionary object just before serialisation.
function prunePatient(p: Record<string, unknown> | null | undefined, detailed: boolean, inc: Set<string>) {
  if (!p) return;
  if (!detailed) for (const f of detailedPatientFields) p[f] = undefined;
  if (!inc.has('owner')) p.owner = undefined;
  if (!inc.has('species')) p.species = undefined;
}

export function pruneRestResult(field: string, variables: Record<string, unknown>, body: any): void {
  if (!body) return;
  const inc = includes(variables.include);
  if (patientRoutes.has(field)) {
    const detailed = variables.response_format === 'detailed';
    const items = Array.isArray(body.data) ? body.data : [body.data];
    for (const p of items) prunePatient(p, detailed, inc);
  } else if (recordRoutes.has(field)) {
    for (const item of body.data ?? []) prunePatient(item?.patient, true, inc);
  }
}
