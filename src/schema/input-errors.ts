import { AppError } from '../lib/errors.ts';
import { camelOf } from '../lib/names.ts';

/**
 * A write's refusal as a mutation's caller wrote the request (docs/graphql.md, Naming): the
 * services name what REST sends (`first_name`, `contacts[0].value`, the `Idempotency-Key` and
 * `If-Match` headers), a GraphQL caller sent `input: {firstName, contacts, idempotencyKey,
 * expectedUpdatedAt}`. REST's errors are never passed through here, so they stay as they are.
 */
const headers: Record<string, string> = {
  'Idempotency-Key': 'input.idempotencyKey',
  'If-Match': 'input.expectedUpdatedAt',
};

/** A body's field path (`address.postal_code`, `contacts[0].value`) as the input's (`input.address.postalCode`). */
export function inputParamOf(param: string): string {
  if (param in headers) return headers[param];
  if (param === 'body') return 'input';
  return `input.${param.split('.').map(camelOf).join('.')}`;
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The one way a service's refusal is told in GraphQL's names (docs/graphql.md, Naming): `param`
 * renamed by `paramOf` (undefined: not a name this face renames), and the message with it where
 * the message begins with the name (`first_name is required.`; a one-word name such as `phone`
 * may also be a word of the sentence, so only there), then `words` for anything else the face
 * renames in the sentence. The read arguments (face-args.ts), the mutations' inputs (below) and
 * the sandbox's (chat/mutations.ts) each pass their own two functions.
 */
export function renamedError(
  err: unknown,
  paramOf: (param: string) => string | undefined,
  words: (message: string, from: string, to: string) => string = (m) => m,
): unknown {
  if (!(err instanceof AppError) || !err.param) return err;
  const param = paramOf(err.param);
  if (param === undefined || param === err.param) return err;
  const named = err.message.replace(
    new RegExp(`^(Unknown field )?${escaped(err.param)}(?=$|[\\s:.,'])`),
    `$1${param}`,
  );
  return new AppError(err.code, words(named, err.param, param), {
    param,
    ...(err.details ? { details: err.details } : {}),
  });
}

/**
 * Beyond the field it names: a header's name anywhere (no word of a sentence looks like one),
 * and other field names the message mentions (`…needs a first_name or a last_name`, `its
 * updated_at is now…`), snake_case, which no word is: those become GraphQL's (`firstName`),
 * unless quoted (a value as sent) or part of a path or URL.
 */
function inputWords(message: string, from: string, to: string): string {
  const named = from in headers ? message.split(from).join(to) : message;
  return named.replace(/(?<=^|[\s(,;:])[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+(?=$|[\s),;:.!?])/g, camelOf);
}

/** A write's refusal naming a body field or header, as the mutation's input names it. */
export const inInputNames = (err: unknown): unknown => renamedError(err, inputParamOf, inputWords);
