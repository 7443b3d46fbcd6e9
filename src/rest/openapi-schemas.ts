import {
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { errorStatuses } from '../lib/errors.ts';
import { EVENT_EXAMPLE } from '../services/events/event.resource.ts';
import { allShapes, type Field } from '../services/resource.ts';

/**
 * The OpenAPI document's component schemas (src/rest/openapi.ts): SOFA's, with the Rest GraphQL
 * schema's nullability and the fields REST may leave out, the one Error schema, and only those
 * the document reaches.
 */
export function componentSchemas(
  sofaSchemas: Record<string, any>,
  restSchema: GraphQLSchema,
): Record<string, any> {
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
  return converted;
}

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
            "Where this code is explained: its anchor in the service's error reference. Absolute where the deployment sets its public address (`https://api.example.com/errors#validation_failed`), else a path such as `/errors#validation_failed`: resolve it against the URL you called.",
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
export function reachableSchemas(roots: unknown, all: Record<string, any>): Record<string, any> {
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
