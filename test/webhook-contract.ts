import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { envelopeSchemaName } from '../src/rest/webhooks-section.ts';

/**
 * A delivery's body checked against its `webhooks` entry of openapi.json (as `npm run contracts`
 * wrote it), every object closed as test/openapi.test.ts checks answers: an extra key, a missing
 * one or a wrong type is a problem. Answers null when the body agrees, else what is wrong.
 */
export const openapiDocument = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '..', 'openapi.json'), 'utf8'),
);

function closed(node: any): any {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== 'object') return node;
  const out: any = {};
  for (const [k, v] of Object.entries(node))
    out[k] =
      k === '$ref' && typeof v === 'string' ? v.replace('#/components/schemas/', '#/$defs/') : closed(v);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

export function deliveryChecker(): (type: string, body: unknown) => string | null {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ((ajvFormats as any).default ?? ajvFormats)(ajv);
  ajv.addSchema({ $id: 'doc', $defs: closed(openapiDocument.components.schemas) });
  return (type, body) => {
    const validate = ajv.getSchema(`doc#/$defs/${envelopeSchemaName(type)}`);
    if (!validate) return `${type}: no envelope schema ${envelopeSchemaName(type)} in openapi.json`;
    return validate(body) ? null : `${type}: ${ajv.errorsText(validate.errors)}`;
  };
}
