import { EVENT_TYPES } from '../events/types.ts';
import { idPattern, prefixes } from '../lib/ids.ts';
import { MESSAGE_TYPES } from '../services/chat/filters.ts';
import { RESPONSE_FORMATS } from '../services/groups-params.ts';
import { Patient } from '../services/patients/patient.resource.ts';
import { includesOf } from '../services/resource.ts';
import type { RestRoute } from './routes.ts';

/**
 * The parameters of the OpenAPI document's operations (src/rest/openapi.ts): SOFA's, one per
 * name, path parameters in the path, the rest in the query, with the schema of what the services
 * accept, and which of them a 422 may name.
 */
interface ParameterSpec {
  /** Absent: the Rest argument's own text, which names what the list's filter bounds. */
  description?: string;
  schema: Record<string, unknown>;
  style?: string;
  explode?: boolean;
  example?: unknown;
  /** The 422 message for a bad value, when the services validate it. */
  invalid?: string;
  /** Required although its Rest argument is optional (the service names it in a 422 when missing). */
  required?: true;
}

const patientFormatNote = Object.keys(Patient.fields)
  .filter((f) => Patient.fields[f].group === 'detailed')
  .join(', ');

const patientIncludes = includesOf(Patient);

/**
 * A point in time as the services read it (readDate, src/lib/timestamps.ts): an RFC 3339
 * date-time with its offset, or a plain date (its midnight). `date-time` alone would have a
 * validating client or proxy refuse the date every list and availability accept.
 */
const instantSchema = { type: 'string', anyOf: [{ format: 'date-time' }, { format: 'date' }] };

/** What the services accept for each parameter name (see src/db/pagination.ts, src/services). */
const knownParameters: Record<string, ParameterSpec> = {
  limit: {
    description: 'Page size, 1 to 100.',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    invalid: 'limit must be an integer from 1 to 100.',
  },
  cursor: {
    description: '`next_cursor` of the previous page, passed back verbatim. Omit for the first page.',
    // base64url (src/db/pagination.ts); anything else is a 422.
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
    invalid: 'cursor is not a cursor of this list; pass next_cursor back verbatim.',
  },
  response_format: {
    description: `\`concise\` returns the core fields; \`detailed\` adds ${patientFormatNote}.`,
    schema: { type: 'string', enum: [...RESPONSE_FORMATS], default: 'concise' },
    invalid: 'response_format must be concise or detailed.',
  },
  include: {
    description: `Veterinary clinics: comma list of ${patientIncludes.map((i) => `\`${i}\``).join(', ')} to embed in the patient (e.g. \`${patientIncludes.join(',')}\`). Unknown values are a 422.`,
    schema: { type: 'array', items: { type: 'string', enum: patientIncludes }, uniqueItems: true },
    style: 'form',
    explode: false,
    // No `example`: Swagger UI's try-it-out preselects a parameter's example, and at a dental
    // clinic an include is a 422.
    invalid: `Unknown include value(s): ${patientIncludes[0]}2. Allowed: ${patientIncludes.join(', ')}.`,
  },
  phone: {
    description:
      'Only this phone number (the patient side); separators ignored, local (0…) or international form.',
    schema: { type: 'string' },
    invalid: "phone 'abc' is not a phone number.",
  },
  direction: {
    description: 'Only inbound or only outbound messages.',
    schema: { type: 'string', enum: ['inbound', 'outbound'] },
    invalid: 'direction must be one of inbound, outbound.',
  },
  type: {
    description: 'Only messages of this type.',
    schema: { type: 'string', enum: [...MESSAGE_TYPES] },
    invalid: `type must be one of ${MESSAGE_TYPES.join(', ')}.`,
  },
  // Each list's own argument text says what they bound (a message's creation, an appointment's
  // start): src/schema/records.ts, src/schema/chat/queries.ts.
  from: {
    schema: instantSchema,
    invalid:
      'from must be an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02).',
  },
  to: {
    schema: instantSchema,
    invalid:
      'to must be an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02).',
  },
  updated_since: {
    description:
      'Incremental sync: only records changed at or after this time, in ascending mutation order (any change, a receipt included, moves a record to the end). ISO 8601 with a zone, or a date.',
    schema: instantSchema,
    invalid:
      'updated_since must be an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02).',
  },
  is_handled: {
    description: 'Only conversations staff marked handled (true) or not (false).',
    schema: { type: 'string', enum: ['true', 'false'] },
    invalid: 'is_handled must be true or false.',
  },
  sendable: {
    description: '`true`: only templates this API can send; `false`: only the others.',
    schema: { type: 'string', enum: ['true', 'false'] },
    invalid: 'sendable must be true or false.',
  },
  email: {
    description: 'Patients with this email address (case-insensitive exact match).',
    schema: { type: 'string' },
  },
  query: {
    description: 'Name search: prefix of the first name, last name or full name.',
    schema: { type: 'string' },
  },
  appointment_id: {
    description: 'Only the treatments of this appointment (an appointment id, e.g. `appt_1`).',
    schema: { type: 'string', pattern: idPattern('Appointment') },
    invalid: "appointment_id 'x' is not an appointment id.",
  },
  species_id: {
    description: 'Only the breeds of this species (a species id, e.g. `spc_1`).',
    schema: { type: 'string', pattern: idPattern('Species') },
    invalid: "species_id 'x' is not a species id.",
  },
  created_since: {
    description:
      'Incremental sync: only events created at or after this time, oldest first (ascending created_at, ties by id). ISO 8601 with a zone, or a date.',
    schema: instantSchema,
    example: '2026-11-01T00:00:00Z',
    invalid:
      'created_since must be an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02).',
  },
};

/** Parameters of one route whose name means something else elsewhere (`type` of events vs messages). */
const routeParameters: Record<string, Record<string, ParameterSpec>> = {
  listEvents: {
    type: {
      description:
        'Only events of these types: repeat the parameter (`type=patient.created&type=appointment.updated`) or separate them by commas. A chat.* type needs `chat:read` on the key (else 403); an unknown type is a 422.',
      schema: { type: 'array', items: { type: 'string', enum: EVENT_TYPES }, uniqueItems: true },
      style: 'form',
      explode: true,
      example: ['patient.created', 'appointment.updated'],
      invalid: `Unknown event type 'patient.deleted'. Known types: ${EVENT_TYPES.join(', ')}.`,
    },
  },
  listAvailability: availabilityParameters(),
};

/** GET /v1/availability (src/services/availability/availability.ts). */
function availabilityParameters(): Record<string, ParameterSpec> {
  const id = (kind: 'AppointmentType' | 'Branch' | 'Provider', what: string, required?: true) => ({
    description: `${what} Unknown, another clinic's or disabled: a 422.`,
    schema: { type: 'string', pattern: idPattern(kind) },
    invalid: `${what.split(':')[0]} 'x' is not a ${prefixes[kind]}_… id.`,
    ...(required ? { required } : {}),
  });
  const when = (param: string, what: string, example: string) => ({
    description: `${what} ISO 8601 with an offset, or a date: the clinic's midnight starting it, in its time zone.`,
    schema: instantSchema,
    example,
    required: true as const,
    invalid: `${param} must be an ISO 8601 date-time with an offset (2026-12-01T09:00:00+02:00) or a date (2026-12-01: the clinic's midnight starting it).`,
  });
  return {
    appointment_type_id: id(
      'AppointmentType',
      'appointment_type_id: the appointment type; slots last its duration_minutes.',
      true,
    ),
    branch_id: id('Branch', 'branch_id: only slots at this branch.'),
    provider_id: id('Provider', 'provider_id: only slots of this provider.'),
    from: when('from', 'Slots starting at or after this (inclusive).', '2026-12-01T00:00:00+02:00'),
    to: when(
      'to',
      'Slots starting before this (exclusive); at most 31 days after from.',
      '2026-12-08T00:00:00+02:00',
    ),
  };
}

export function parameters(
  route: RestRoute,
  path: string,
  sofaParams: any[],
): { params: any[]; invalid: { param: string; message: string }[] } {
  const inPath = new Set([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
  const seen = new Map<string, any>();
  // Path parameters first, in path order; then the query parameters in SOFA's (argument) order.
  for (const name of inPath) seen.set(name, sofaParams.find((p) => p?.name === name) ?? { name });
  for (const p of sofaParams) if (p?.name && !seen.has(p.name)) seen.set(p.name, p);

  const invalid: { param: string; message: string }[] = [];
  const params = [...seen.values()].map((p) => {
    const { description: schemaDescription, ...sofaSchema } = p.schema ?? { type: 'string' };
    if (inPath.has(p.name)) {
      const kind = route.ids?.[p.name];
      if (!kind) throw new Error(`openapi: ${route.path} names no id kind for :${p.name} (RestRoute.ids).`);
      return {
        name: p.name,
        in: 'path',
        required: true,
        description: `${p.description ?? schemaDescription ?? `${p.name} of the object.`} Another form, or an unknown id, is a 404.`,
        schema: { type: 'string', pattern: idPattern(kind) },
      };
    }
    const known = routeParameters[route.field]?.[p.name] ?? knownParameters[p.name];
    // An unknown parameter keeps SOFA's schema and is assumed to be validated.
    if (!known || known.invalid)
      invalid.push({ param: p.name, message: known?.invalid ?? `${p.name} is not valid.` });
    const out: Record<string, unknown> = {
      name: p.name,
      in: 'query',
      required: known?.required ?? p.required === true,
      description: known?.description ?? p.description ?? schemaDescription ?? '',
    };
    if (known?.style) out.style = known.style;
    if (known?.explode !== undefined) out.explode = known.explode;
    out.schema = known?.schema ?? sofaSchema;
    if (known?.example !== undefined) out.example = known.example;
    return out;
  });
  return { params, invalid };
}
