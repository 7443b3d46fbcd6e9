import type { GraphQLField } from 'graphql';
import { forbidden, scopesIn } from '../auth/scopes.ts';
import { toId } from '../lib/ids.ts';
import { defaultLimits } from '../lib/limits.ts';
import { parameters } from './openapi-parameters.ts';
import {
  authenticatedHeaders,
  errorResponse,
  ref,
  requestIdHeader,
  retryAfter,
} from './openapi-responses.ts';
import { requestBodies } from './request-bodies.ts';
import type { RestRoute } from './routes.ts';

/**
 * One operation of the OpenAPI document (src/rest/openapi.ts): SOFA's, corrected against the
 * route table and the Rest field (scopes), with every response it may answer.
 */
function successDescription(schemaRef: string | undefined, schemas: Record<string, any> | undefined): string {
  const name = schemaRef?.replace('#/components/schemas/', '');
  const props = name ? (schemas?.[name]?.properties ?? {}) : {};
  if ('next_cursor' in props) return 'One page: `data`, and `next_cursor` (null on the last page).';
  if (props.data?.type === 'array') return 'All of them, in `data` (not paginated).';
  if ('data' in props) return 'The object, in `data`.';
  return 'OK';
}

export function operation(
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
