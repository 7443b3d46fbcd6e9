import { z } from 'zod';
import { DOWNLOAD_URL_RULE } from '../lib/address-policy.ts';
import { allWrites } from '../services/all-writes.ts';
import { NETWORK_NOT_CONFIGURED_ERROR } from '../services/chat/networks.ts';
import { CAPTION_MAX, PARAM_MAX, SEND_FIELDS, TEXT_MAX } from '../services/chat/send-input.ts';
import { restFieldOf, type WriteOperation } from '../services/writes.ts';

/**
 * The JSON bodies of the POST routes, for the OpenAPI document (src/rest/openapi.ts). The
 * services check bodies field by field (src/services/chat/send-input.ts and others); these
 * schemas say the same, and test/openapi.test.ts sends their examples and their refusals.
 */
export interface BodyDoc {
  schema: Record<string, unknown>;
  example: unknown;
  headers?: Record<string, unknown>[];
  errors: Record<string, { code: string; description: string; message: string; param?: string }>;
}

const validation = (fields: string, message: string, param: string) => ({
  code: 'validation_failed',
  description: `\`validation_failed\`: ${fields}; \`param\` names the field.`,
  message,
  param,
});

const idempotencyHeader = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Retries with the same key and body within 24 hours answer the first response (with `Idempotent-Replayed: true`) and do nothing again; the same key with another body is a 409. 1 to 255 printable ASCII characters; a UUID is a good choice.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

const ifMatchHeader = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'The `ETag` a GET of the object answered: when the object has changed since, the write is refused with 412 and changes nothing, so two clients never overwrite each other silently.',
  schema: { type: 'string' },
  example: '"1764072000123"',
};

/** The body document of a write, from its one input definition (src/services/writes.ts). */
function writeBody(op: WriteOperation): BodyDoc {
  const { $schema: _, ...schema } = z.toJSONSchema(op.input, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  const required = (schema.required as string[] | undefined)?.[0];
  const hasId = op.path.includes(':id') && op.ifMatch !== false;
  const errors: BodyDoc['errors'] = {
    '422': validation(
      'a field is missing, of the wrong type or out of range, names a record the clinic does not have, or is not one this operation takes',
      required ? `${required} is required.` : 'Unknown field colour; it is not one this operation takes.',
      required ?? 'colour',
    ),
  };
  if (op.method === 'POST')
    errors['409'] = {
      code: 'conflict',
      description:
        '`conflict`: the Idempotency-Key was used with another body, or its first request is still running.',
      message: 'This Idempotency-Key was used with another request body; use a new key for a new request.',
      param: 'Idempotency-Key',
    };
  if (hasId)
    errors['412'] = {
      code: 'precondition_failed',
      description:
        '`precondition_failed`: If-Match names a version the object no longer has; nothing changed.',
      message:
        'The object changed since the version If-Match names; read it again and retry. Nothing was changed.',
      param: 'If-Match',
    };
  return {
    schema,
    example: op.example,
    headers: [...(op.method === 'POST' ? [idempotencyHeader] : []), ...(hasId ? [ifMatchHeader] : [])],
    errors: { ...errors, ...op.errors },
  };
}

let all: Record<string, BodyDoc> | undefined;

/**
 * Every write route's body, by Rest field: each write definition's, and the chat send's (below),
 * written beside its own check (`WriteOperation.parse`): its definition's `input` (which GraphQL's
 * input is made from) shares its texts (SEND_FIELDS) but cannot say its rules (exactly one of
 * text, template or media), its bounds or its refusals.
 */
export function requestBodies(): Record<string, BodyDoc> {
  all ??= {
    ...Object.fromEntries(allWrites().map((op) => [restFieldOf(op), writeBody(op)])),
    ...chatBodies,
  };
  return all;
}

const chatBodies: Record<string, BodyDoc> = {
  restSendMessage: {
    schema: {
      type: 'object',
      description: SEND_FIELDS.body,
      required: ['to'],
      additionalProperties: false,
      properties: {
        to: {
          type: 'string',
          description: SEND_FIELDS.to,
        },
        text: {
          type: 'string',
          minLength: 1,
          maxLength: TEXT_MAX,
          description: SEND_FIELDS.text,
        },
        template: {
          type: 'string',
          description: SEND_FIELDS.template,
        },
        params: {
          type: 'array',
          items: { type: 'string', maxLength: PARAM_MAX },
          description: SEND_FIELDS.params,
        },
        media: {
          type: 'object',
          required: ['type', 'url'],
          additionalProperties: false,
          properties: {
            type: {
              type: 'string',
              enum: ['image', 'document'],
              description: SEND_FIELDS.mediaType,
            },
            url: {
              type: 'string',
              format: 'uri',
              description: SEND_FIELDS.mediaUrl,
            },
            filename: {
              type: 'string',
              description: SEND_FIELDS.mediaFilename,
            },
            caption: {
              type: 'string',
              maxLength: CAPTION_MAX,
              description: SEND_FIELDS.mediaCaption,
            },
          },
        },
      },
    },
    example: { to: '050-123-4567', text: 'Your appointment is confirmed for Monday at 10:00.' },
    headers: [
      {
        ...idempotencyHeader,
        description:
          'Retries with the same key and body within 24 hours answer the first response (with `Idempotent-Replayed: true`) and send nothing; the same key with another body is a 409. 1 to 255 printable ASCII characters; a UUID is a good choice.',
      },
    ],
    errors: {
      '503': NETWORK_NOT_CONFIGURED_ERROR,
      '409': {
        code: 'conflict',
        description:
          '`conflict`: the Idempotency-Key was used with another body, or its first request is still running.',
        message: 'This Idempotency-Key was used with another request body; use a new key for a new request.',
        param: 'Idempotency-Key',
      },
      '422': validation(
        `not exactly one of text, template or media; a bad \`to\`; an unknown or unsendable template (two different messages); params not of the template’s parameter_count; media that is not the declared type, too large, not downloadable, or at a URL the rule refuses (${DOWNLOAD_URL_RULE}); a query parameter (this endpoint takes none)`,
        "Unknown template 'reminder'. GET /v1/chat/templates lists the clinic's templates.",
        'template',
      ),
    },
  },
};
