import {
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { forbidden, scopesIn } from '../auth/scopes.ts';
import { EVENT_TYPES } from '../events/types.ts';
import { docUrlOf } from '../lib/error-docs.ts';
import { type ErrorCode, errorStatuses, RETRY_AFTER_UNAVAILABLE } from '../lib/errors.ts';
import { idPattern, prefixes, toId } from '../lib/ids.ts';
import { defaultLimits } from '../lib/limits.ts';
import { schemas } from '../schema/index.ts';
import { MESSAGE_TYPES } from '../services/chat/filters.ts';
import { EVENT_EXAMPLE } from '../services/events/event.resource.ts';
import { RESPONSE_FORMATS } from '../services/groups-params.ts';
import { Patient } from '../services/patients/patient.resource.ts';
import { allShapes, type Field, includesOf } from '../services/resource.ts';
import { requestBodies } from './request-bodies.ts';
import { type RestRoute, restRoutes } from './routes.ts';
import { webhookParameters, webhooksSection } from './webhooks-section.ts';

/**
 * The /v1 OpenAPI document: SOFA's (fets') generated document, fixed up.
 *
 * SOFA's document is the source of the operations' parameters and success schemas and of the
 * component schemas; it is then corrected against the route table (paths, methods, operationId,
 * tag, summary) and the Rest GraphQL schema (nullability, list items, scopes):
 *
 * - OpenAPI 3.1: nullable fields are `type: [T, "null"]`, nullable objects `anyOf: [$ref, null]`.
 *   SOFA selects every field of a route's type, so every key is always in the body (null when
 *   empty) and `required` lists them all, nullable or not. Only the keys of groups a request may
 *   leave out (the detailed patient fields, owner, species: presenters give the requested groups'
 *   fields only) are optional.
 * - Full paths (`/v1/patients/{id}`), no server prefix, only the routes of the table (no SOFA
 *   /webhook), one parameter per name, path parameters in the path, the rest in the query, with
 *   the schema of what the services accept.
 * - Error responses share one `Error` schema (src/rest/errors.ts). Unreferenced component
 *   schemas (Query, ...) are dropped and the rest sorted, so the output is deterministic.
 * - Responses shared by every operation (401, 405, 429, 500, 503, 504) are response components;
 *   every response to an authenticated request carries the RateLimit headers. A known path with
 *   another method is a 405 with `Allow` (src/server/app.ts), referenced by each operation.
 * - Parameters say what the server enforces: id patterns per kind, enums for `include` and
 *   `response_format`, the cursor's alphabet, the page size range.
 */
export function openApiDocument(
  router: any,
  restSchema: GraphQLSchema = schemas().restSchema,
): Record<string, any> {
  const sofa = structuredClone(router.openAPIDocument) as Record<string, any>;
  const queryFields = restSchema.getQueryType()?.getFields() ?? {};
  const mutationFields = restSchema.getMutationType()?.getFields() ?? {};

  const sofaSchemas: Record<string, any> = sofa.components?.schemas ?? {};
  const converted: Record<string, any> = {};
  const optional = optionalInRest();
  for (const [name, schema] of Object.entries(sofaSchemas)) {
    const type = restSchema.getType(name);
    converted[name] = isObjectType(type) ? objectSchema(name, schema, type.getFields(), optional) : schema;
  }
  if (converted.Error)
    throw new Error('openapi: a Rest GraphQL type is named Error, which clashes with the error schema.');
  converted.Error = errorSchema;
  // The event envelope: `data` is a JSON object (the GraphQL JSON scalar says only "any value").
  if (converted.Event) {
    converted.Event.properties.data = { ...converted.Event.properties.data, type: 'object' };
    converted.Event.examples = [EVENT_EXAMPLE];
  }

  // After the component schemas are complete: each envelope's `data` refers to one of them.
  const webhooks = webhooksSection(converted);

  const paths: Record<string, any> = {};
  for (const route of restRoutes) {
    const path = `/v1${oasPath(route.path)}`;
    const method = route.method.toLowerCase();
    const source = findSofaOperation(sofa, route);
    if (!source)
      throw new Error(
        `openapi: SOFA generated no ${route.method} ${route.path} (Rest field ${route.field}).`,
      );
    const field = (route.method === 'GET' ? queryFields : mutationFields)[route.field];
    paths[path] ??= {};
    paths[path][method] = operation(route, path, source, field, converted);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: sofa.info?.title ?? 'clinic-gateway',
      version: sofa.info?.version ?? '1.0.0',
      description: infoDescription,
      contact: { name: 'clinic-gateway API support', url: 'https://github.com/clinic-gateway' },
      license: { name: 'Proprietary', url: 'https://github.com/clinic-gateway' },
    },
    // Relative: the document describes whichever host serves it (paths carry /v1).
    servers: [{ url: '/', description: 'The server that serves this document.' }],
    tags: [...new Set(restRoutes.map((r) => r.tag))].map((name) => ({
      name,
      description: tagDescriptions[name] ?? name,
    })),
    security: [{ bearerAuth: [] }],
    paths,
    webhooks,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key of the clinic: `Authorization: Bearer <API_KEY>`. Each key has scopes.',
        },
      },
      headers: {
        Allow: {
          description: 'The methods the path does allow, comma-separated (e.g. `GET`).',
          schema: { type: 'string' },
          example: 'GET',
        },
        RetryAfter: {
          description: 'Seconds to wait before retrying.',
          schema: { type: 'integer', minimum: 1 },
        },
        RateLimitPolicy: {
          description: 'The budget of this API key: points per window of `w` seconds.',
          schema: { type: 'string', pattern: '^\\d+;w=\\d+$' },
          example: `${defaultLimits.rateLimitPoints};w=${defaultLimits.rateLimitWindowSeconds}`,
        },
        RateLimitLimit: {
          description: 'Points this API key may spend per window (a request spends its cost).',
          schema: { type: 'integer', minimum: 1 },
        },
        RateLimitRemaining: {
          description: 'Points left in the current window.',
          schema: { type: 'integer', minimum: 0 },
        },
        RateLimitReset: {
          description: 'Seconds until the window resets.',
          schema: { type: 'integer', minimum: 1 },
        },
        RequestId: {
          description:
            'Id of this request (also `request_id` in error bodies); quote it when reporting a problem.',
          schema: { type: 'string' },
        },
      },
      responses: sharedResponses,
      parameters: webhookParameters,
      schemas: reachableSchemas([paths, sharedResponses, webhooks], converted),
    },
  };
}

const infoDescription = [
  'REST API of clinic-gateway. Every path lives under `/v1`; the same data is also served as GraphQL at `/graphql`.',
  '',
  'Authenticate with `Authorization: Bearer <API_KEY>`. Keys are scoped: each operation names the scopes it needs,',
  'and a key without one gets 403 with the missing scopes in `error.required_scopes`.',
  '',
  'Single objects come as `{data}`. Paginated lists come as `{data, next_cursor}`: pass `next_cursor` back verbatim as',
  '`cursor` for the next page; it is null on the last page. `limit` is 1 to 100 (default 25). Bounded lists (catalog)',
  'return everything as `{data}`.',
  '',
  'Errors are `{"error": {"code", "message", "param"?, "request_id", "required_scopes"?}}`.',
  'A query parameter that an operation does not take is a 422 `validation_failed` naming it in `param`',
  '(a misspelt filter never widens a search).',
  '',
  `Each API key has a budget of points per window (${defaultLimits.rateLimitPoints} per ${defaultLimits.rateLimitWindowSeconds} s unless the operator sets another),`,
  'REST and GraphQL together; a request spends its cost, about one point per record it reads (a page of 25 patients',
  'about 100). Every authenticated response carries `RateLimit-Policy`, `RateLimit-Limit`, `RateLimit-Remaining`',
  'and `RateLimit-Reset`; over the budget the answer is 429 `rate_limited` with `Retry-After`.',
  '',
  `While the database is unreachable the answer is 503 \`service_unavailable\` with \`Retry-After\`; a request that runs`,
  `longer than its deadline (${defaultLimits.requestDeadlineMs / 1000} s unless the operator sets another) is 504 \`deadline_exceeded\`.`,
  '',
  'Only the documented methods of each path are served: any other method on a documented path is 405',
  '`method_not_allowed` with an `Allow` header naming the allowed methods, before authentication',
  '(`#/components/responses/MethodNotAllowed`). An undocumented path under `/v1` is 404 `not_found`.',
  'An empty query parameter, or one given twice (lists such as `include` excepted), is a 422 naming it.',
].join('\n');

const tagDescriptions: Record<string, string> = {
  Patients: 'Patients (animals at veterinary clinics) and their appointments, treatments and payments.',
  Catalog:
    'Reference data of the clinic: bounded lists (no cursor) of the entries still offered, each entry by id, and their writes (create, change, disable, enable).',
  Calls:
    "Calls the clinic's phone system reports (scope calls:write), then their recording and transcript; read with calls:read.",
  Availability:
    "Providers' weekly working hours (read and replaced whole) and the free slots computed from them in the clinic's time zone; bounded lists, no cursor.",
  Events:
    'The outbox: every event the clinic recorded, in the envelope webhooks deliver, kept for 30 days by default (scope webhooks:manage; chat.* events also need chat:read).',
};

/** `/patients/:id` → `/patients/{id}`. */
function oasPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/** SOFA's operation for a route: fets keys paths without the base path, `{param}` form. */
function findSofaOperation(sofa: Record<string, any>, route: RestRoute): any {
  const method = route.method.toLowerCase();
  const p = oasPath(route.path);
  for (const candidate of [p, `/v1${p}`, route.path, `/v1${route.path}`]) {
    const op = sofa.paths?.[candidate]?.[method];
    if (op) return op;
  }
  return undefined;
}

// ---------- operations ----------

interface ParameterSpec {
  description: string;
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
  from: {
    description: 'Messages created at or after this time (ISO 8601 with a zone, or a date).',
    schema: { type: 'string', format: 'date-time' },
    invalid:
      'from must be an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02).',
  },
  to: {
    description: 'Messages created before this time (ISO 8601 with a zone, or a date).',
    schema: { type: 'string', format: 'date-time' },
    invalid:
      'to must be an ISO 8601 date-time with a time zone (2026-01-02T09:30:00Z) or a date (2026-01-02).',
  },
  updated_since: {
    description:
      'Incremental sync: only records changed at or after this time, in ascending mutation order (any change, a receipt included, moves a record to the end). ISO 8601 with a zone, or a date.',
    schema: { type: 'string', format: 'date-time' },
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
    schema: { type: 'string', format: 'date-time' },
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
    schema: { type: 'string', format: 'date-time' },
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

function parameters(
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

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

/** Headers of every response to an authenticated request (src/auth/rate-limit.ts). */
const authenticatedHeaders = {
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
  ...requestIdHeader,
};
const retryAfter = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };

function errorResponse(
  description: string,
  example: { code: string; message: string; param?: string; required_scopes?: string[] },
  headers: Record<string, unknown> = authenticatedHeaders,
) {
  return {
    description,
    headers,
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: {
          error: {
            code: example.code,
            message: example.message,
            ...(example.param ? { param: example.param } : {}),
            request_id: 'req_3kTq9xYb2mN1',
            // Request bodies' documented errors name their code as a string (src/rest/request-bodies.ts).
            doc_url: docUrlOf(example.code as ErrorCode),
            ...(example.required_scopes ? { required_scopes: example.required_scopes } : {}),
          },
        },
      },
    },
  };
}

/** The responses every operation has, as components each operation refers to. */
const sharedResponses = {
  Unauthenticated: errorResponse(
    '`unauthenticated`: the Authorization header is missing, or the key is invalid or revoked.',
    { code: 'unauthenticated', message: 'Invalid or revoked API key.' },
    requestIdHeader,
  ),
  MethodNotAllowed: errorResponse(
    '`method_not_allowed`: the path exists but not with this method; `Allow` names the methods it has. Sent before authentication.',
    { code: 'method_not_allowed', message: 'POST is not allowed on /v1/patients; use GET.' },
    { Allow: { $ref: '#/components/headers/Allow' }, ...requestIdHeader },
  ),
  RateLimited: errorResponse(
    '`rate_limited`: this API key has spent its budget of points for the window (a request spends its cost, about one point per record read), or its address failed authentication too often. Sent after a short delay.',
    {
      code: 'rate_limited',
      message: `This API key has spent its budget of ${defaultLimits.rateLimitPoints} points per ${defaultLimits.rateLimitWindowSeconds} s (this request costs 101). Retry after 4 s.`,
    },
    { ...retryAfter, ...authenticatedHeaders },
  ),
  InternalError: errorResponse(
    '`internal_error`: something failed on our side; quote `request_id` when reporting it.',
    {
      code: 'internal_error',
      message: 'Something went wrong on our side. Quote the request_id when reporting it.',
    },
  ),
  ServiceUnavailable: errorResponse(
    `\`service_unavailable\`: the database is unreachable at the moment; retry after \`Retry-After\` seconds (${RETRY_AFTER_UNAVAILABLE}).`,
    {
      code: 'service_unavailable',
      message: 'The database is unreachable at the moment; retry after the time in Retry-After.',
    },
    { ...retryAfter, ...requestIdHeader },
  ),
  DeadlineExceeded: errorResponse(
    '`deadline_exceeded`: the request ran longer than its deadline and was stopped.',
    {
      code: 'deadline_exceeded',
      message: `The request took longer than ${defaultLimits.requestDeadlineMs} ms and was stopped.`,
    },
    requestIdHeader,
  ),
};

const ref = (name: keyof typeof sharedResponses) => ({ $ref: `#/components/responses/${name}` });

function successDescription(schemaRef: string | undefined, schemas: Record<string, any> | undefined): string {
  const name = schemaRef?.replace('#/components/schemas/', '');
  const props = name ? (schemas?.[name]?.properties ?? {}) : {};
  if ('next_cursor' in props) return 'One page: `data`, and `next_cursor` (null on the last page).';
  if (props.data?.type === 'array') return 'All of them, in `data` (not paginated).';
  if ('data' in props) return 'The object, in `data`.';
  return 'OK';
}

function operation(
  route: RestRoute,
  path: string,
  source: any,
  field: GraphQLField<unknown, unknown> | undefined,
  components: Record<string, any>,
) {
  const { params, invalid } = parameters(
    route,
    path,
    Array.isArray(source.parameters) ? source.parameters : [],
  );
  const scopes = scopesIn((field?.extensions?.pothosOptions as any)?.authScopes);
  const sofaSuccess = source.responses?.[String(route.status)] ?? Object.values(source.responses ?? {})[0];
  const successSchema = (sofaSuccess as any)?.content?.['application/json']?.schema;

  const description = [
    field?.description,
    scopes.length ? `Scopes: ${scopes.map((s) => `\`${s}\``).join(', ')}.` : undefined,
  ]
    .filter(Boolean)
    .join('\n\n');

  const responses: Record<string, any> = {
    [String(route.status)]: {
      description: successDescription(successSchema?.$ref, components),
      headers: authenticatedHeaders,
      ...(successSchema ? { content: { 'application/json': { schema: successSchema } } } : {}),
    },
  };
  responses['401'] = ref('Unauthenticated');
  responses['403'] = errorResponse(
    '`forbidden`: the key lacks a scope this operation needs; `required_scopes` names them.',
    {
      code: 'forbidden',
      message: forbidden(scopes).message,
      ...(scopes.length ? { required_scopes: scopes } : {}),
    },
  );
  if (params.some((p) => p.in === 'path')) {
    responses['404'] = errorResponse("`not_found`: no object with this id at the key's clinic.", {
      code: 'not_found',
      message: `No ${kindNoun(route.ids?.id ?? 'Patient')} with id '${idExample(route)}'.`,
    });
  }
  const body = route.method !== 'GET' ? requestBodies()[route.field] : undefined;
  if (route.method !== 'GET' && !body)
    throw new Error(`openapi: no request body documented for ${route.field}.`);
  // A DELETE takes no body: its only 422 is a malformed If-Match.
  const bodiless = route.method === 'DELETE';
  if (body && bodiless)
    responses['422'] = errorResponse(
      '`validation_failed`: If-Match is not an ETag a GET of the object answered; `param` names it.',
      {
        code: 'validation_failed',
        message: 'If-Match must be the ETag a GET of the object answered.',
        param: 'If-Match',
      },
    );
  else if (body) {
    responses['400'] = errorResponse('`invalid_request`: the body is not valid JSON.', {
      code: 'invalid_request',
      message: 'The body is not valid JSON.',
    });
    responses['413'] = errorResponse('`payload_too_large`: the body is larger than the limit.', {
      code: 'payload_too_large',
      message: `The body is larger than ${defaultLimits.maxBodyBytes} bytes.`,
    });
  }
  for (const [status, r] of Object.entries(body?.errors ?? {}))
    if (!(bodiless && status === '422'))
      responses[status] = errorResponse(
        r.description,
        { code: r.code, message: r.message, param: r.param },
        // An operation's own 503 is also the shared one (the database away), with its Retry-After.
        status === '503' ? { ...retryAfter, ...requestIdHeader } : undefined,
      );
  if (invalid.length && !body) {
    const example = invalid.find((i) => i.param === 'limit') ?? invalid[0];
    responses['422'] = errorResponse(
      `\`validation_failed\`: a parameter has an invalid value (${invalid.map((i) => `\`${i.param}\``).join(', ')}), is empty, is given twice (lists excepted) or is not one the endpoint takes; \`param\` names it.`,
      { code: 'validation_failed', message: example.message, param: example.param },
    );
  }
  responses['405'] = ref('MethodNotAllowed');
  responses['429'] = ref('RateLimited');
  responses['500'] = ref('InternalError');
  // An operation's own 503 (a live clinic's send without a network) says both of its causes.
  responses['503'] ??= ref('ServiceUnavailable');
  responses['504'] = ref('DeadlineExceeded');

  return {
    operationId: route.field,
    tags: [route.tag],
    summary: route.summary,
    ...(description ? { description } : {}),
    ...(scopes.length ? { 'x-required-scopes': scopes } : {}),
    ...(params.length || body?.headers ? { parameters: [...params, ...(body?.headers ?? [])] } : {}),
    ...(body && !bodiless
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: body.schema, example: body.example } },
          },
        }
      : {}),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  };
}

function idExample(route: RestRoute): string {
  const kind = route.ids?.id ?? 'Patient';
  // A message's id names its direction (out_…), not the Message kind's prefix.
  return kind === 'Message' ? 'out_999' : toId(kind, 999);
}

/** "appointment type", as the 404 message names the kind. */
const kindNoun = (kind: string) => kind.replace(/[A-Z]/g, (c, i) => (i ? ' ' : '') + c.toLowerCase());

// ---------- component schemas ----------

const errorSchema = {
  type: 'object',
  description: 'The body of every error response.',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id', 'doc_url'],
      properties: {
        code: {
          type: 'string',
          enum: Object.keys(errorStatuses),
          description: `Stable machine-readable code: ${Object.entries(errorStatuses)
            .map(([code, status]) => `${code} (${status})`)
            .join(', ')}.`,
        },
        message: { type: 'string', description: 'Human-readable explanation; may change, do not parse it.' },
        param: { type: 'string', description: 'The parameter at fault (validation errors).' },
        request_id: { type: 'string', description: 'Id of the request; also in the X-Request-Id header.' },
        doc_url: {
          type: 'string',
          format: 'uri-reference',
          description:
            "Where this code is explained: its anchor in the service's error reference, a path such as `/errors#validation_failed` (resolve it against the URL you called).",
        },
        required_scopes: {
          type: 'array',
          items: { type: 'string' },
          description: 'forbidden: the scopes the key lacks for this operation.',
        },
      },
    },
  },
};

/** When REST carries a field of a non-core group (its presenter leaves it out otherwise). */
function groupNote(field: Field): string | undefined {
  if (field.group === 'detailed') return 'Only with `response_format=detailed`; absent otherwise.';
  if (field.group.startsWith('include:')) {
    const name = field.group.slice('include:'.length);
    const what = field.description ? `${field.description} ` : '';
    return `${what}Only with \`include=${name}\`; absent otherwise, null when ${field.nullMeans ?? 'there is none'}.`;
  }
  return undefined;
}

/**
 * Per type, the fields REST leaves out unless asked for, with the note that says when. Read when
 * the document is built, once every definition has loaded.
 */
const optionalInRest = (): Record<string, Record<string, string>> =>
  Object.fromEntries(
    allShapes().map((shape) => [
      shape.name,
      Object.fromEntries(
        Object.entries(shape.fields).flatMap(([name, field]) => {
          const note = groupNote(field);
          return note ? [[name, note]] : [];
        }),
      ),
    ]),
  );

function objectSchema(
  name: string,
  sofa: any,
  fields: Record<string, GraphQLField<unknown, unknown>>,
  optional: Record<string, Record<string, string>>,
): Record<string, any> {
  const properties: Record<string, any> = {};
  const required: string[] = [];
  for (const [prop, propSchema] of Object.entries<any>(sofa.properties ?? {})) {
    const field = fields[prop];
    const converted = field ? fieldSchema(propSchema, field.type) : propSchema;
    const note = optional[name]?.[prop];
    if (note) converted.description = note;
    properties[prop] = converted;
    // SOFA selects every field, so the key is always there (null when empty) unless its group is left out.
    if (field && !note) required.push(prop);
  }
  return {
    type: 'object',
    ...(sofa.description ? { description: sofa.description } : {}),
    ...(required.length ? { required } : {}),
    properties,
  };
}

/** SOFA's schema of one field, with the GraphQL nullability of the field and of list items. */
function fieldSchema(sofa: any, type: GraphQLOutputType): Record<string, any> {
  const { description, ...rest } = sofa ?? {};
  const nullable = !isNonNullType(type);
  const inner = isNonNullType(type) ? type.ofType : type;
  let out: Record<string, any>;
  if (isListType(inner)) {
    out = { type: nullable ? ['array', 'null'] : 'array', items: fieldSchema(rest.items, inner.ofType) };
  } else if (isEnumType(inner)) {
    // GraphQL names the values in UPPER_CASE; REST sends them as the definition spells them.
    const values = inner.getValues().map((v) => v.value as string);
    out = nullable ? { type: ['string', 'null'], enum: [...values, null] } : { type: 'string', enum: values };
  } else if (rest.$ref) {
    out = nullable ? { anyOf: [{ $ref: rest.$ref }, { type: 'null' }] } : { $ref: rest.$ref };
  } else if (typeof rest.type === 'string') {
    out = { ...rest, type: nullable ? [rest.type, 'null'] : rest.type };
    // GraphQL Float is an IEEE 754 double.
    if (out.format === 'float') out.format = 'double';
  } else {
    out = rest; // e.g. the JSON scalar: any value
  }
  return description ? { description, ...out } : out;
}

/** Only the component schemas the paths (and response components) reach, sorted by name. */
function reachableSchemas(roots: unknown, all: Record<string, any>): Record<string, any> {
  const keep = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        const name = v.slice('#/components/schemas/'.length);
        if (!keep.has(name)) {
          keep.add(name);
          if (!all[name]) throw new Error(`openapi: schema ${name} is referenced but not defined.`);
          visit(all[name]);
        }
      } else visit(v);
    }
  };
  visit(roots);
  return Object.fromEntries([...keep].sort().map((n) => [n, all[n]]));
}
