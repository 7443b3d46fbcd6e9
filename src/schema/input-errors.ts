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
 * The message says the field the way `param` does: a header's name anywhere (no word of a
 * sentence looks like one), a body field's path where the message begins with it
 * (`first_name is required.`, `status_id: no such record…`), since a one-word name (`phone`,
 * `end`, `note`) may also be a word of the sentence. Other field names it mentions
 * (`…needs a first_name or a last_name`, `its updated_at is now…`) are snake_case, which no
 * word is: those become GraphQL's (`firstName`), unless quoted (a value as sent) or part of a
 * path or URL.
 */
function messageOf(message: string, from: string, to: string): string {
  const named =
    from in headers
      ? message.split(from).join(to)
      : message.replace(new RegExp(`^(Unknown field )?${escaped(from)}(?=$|[\\s:.,'])`), `$1${to}`);
  return named.replace(/(?<=^|[\s(,;:])[a-z][a-z0-9]*(?:_[a-z][a-z0-9]*)+(?=$|[\s),;:.!?])/g, camelOf);
}

/** An AppError naming a body field or header, renamed for GraphQL; anything else as it is. */
export function inInputNames(err: unknown): unknown {
  if (!(err instanceof AppError) || !err.param) return err;
  const param = inputParamOf(err.param);
  return new AppError(err.code, messageOf(err.message, err.param, param), {
    param,
    ...(err.details ? { details: err.details } : {}),
  });
}
