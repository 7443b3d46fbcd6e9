import createClient, { type Client, type ClientOptions, createQuerySerializer } from 'openapi-fetch';
import { COMMA_LISTS } from './generated/comma-lists.js';
import type { components, paths } from './generated/openapi.js';

/** The /v1 REST API, every path, parameter, body and answer typed from openapi.json. */
export type RestClient = Client<paths, 'application/json'>;

/** The schemas of openapi.json's components: `Schemas['Patient']`, `Schemas['Error']`, … */
export type Schemas = components['schemas'];

export interface RestClientOptions extends Omit<ClientOptions, 'baseUrl' | 'querySerializer'> {
  /** Where the service is, e.g. http://127.0.0.1:4000 (the paths start with /v1). */
  baseUrl: string;
  /** An API key of the clinic, sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
}

const repeated = createQuerySerializer();
const joined = createQuerySerializer({ array: { style: 'form', explode: false } });

/**
 * Arrays as the document declares each parameter: `include=owner,species` (a repeated `include`
 * is refused), `type=a&type=b` for the rest. openapi-fetch serializes all query arrays one way.
 */
function querySerializer(query: Record<string, unknown>): string {
  return Object.entries(query)
    .map(([name, value]) => (COMMA_LISTS.has(name) ? joined : repeated)({ [name]: value }))
    .filter((part) => part !== '')
    .join('&');
}

/**
 * An openapi-fetch client of the /v1 API. Answers are `{ data, error, response }`: `data` typed by
 * the operation's success answer, `error` by its error answers (`{ error: { code, message, … } }`,
 * docs/errors.md). Send `Idempotency-Key` on a POST through `params.header`.
 *
 *   const api = createRestClient({ baseUrl: 'http://127.0.0.1:4000', apiKey });
 *   const { data, error } = await api.GET('/v1/patients', { params: { query: { limit: 10 } } });
 */
export function createRestClient(options: RestClientOptions): RestClient {
  const { apiKey, baseUrl, ...rest } = options;
  const client = createClient<paths, 'application/json'>({
    ...rest,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    querySerializer: querySerializer as ClientOptions['querySerializer'] & {},
  });
  client.use({
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${apiKey}`);
      return request;
    },
  });
  return client;
}
