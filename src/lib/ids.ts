import { notFound } from './errors.ts';

/**
 * Public ids are `<prefix>_<n>` over the integer primary key. The same string is the REST id and
 * the GraphQL node id. Anything that does not parse is simply an unknown id (404), never a 500.
 */
export const prefixes = {
  Clinic: 'cln',
  ApiKey: 'key',
  Patient: 'pat',
  Owner: 'own',
  Branch: 'br',
  AppointmentType: 'apt',
  AppointmentStatus: 'aps',
  TreatmentMenuItem: 'trm',
  TreatmentCategory: 'trc',
  Provider: 'prv',
  BillingAccount: 'ba',
  Species: 'spc',
  Breed: 'brd',
  Vaccine: 'vac',
  Measurement: 'msr',
  PatientStatus: 'pst',
  Appointment: 'appt',
  Treatment: 'trt',
  Payment: 'pay',
  Call: 'call',
  Conversation: 'conv',
  /** Never shown: a message's id is `in_<n>` or `out_<n>` by its direction (messageId). */
  Message: 'msg',
  InboundMessage: 'in',
  OutboundMessage: 'out',
  Template: 'tpl',
  WebhookSubscription: 'wh',
  WebhookDelivery: 'whd',
  Event: 'evt',
} as const;

export type IdKind = keyof typeof prefixes;

const kindByPrefix = new Map<string, IdKind>(Object.entries(prefixes).map(([k, p]) => [p, k as IdKind]));

export function toId(kind: IdKind, n: number | bigint | string): string {
  return `${prefixes[kind]}_${n}`;
}

export function toIdOrNull(kind: IdKind, n: number | null | undefined): string | null {
  return n == null ? null : toId(kind, n);
}

const numeric = /^[1-9][0-9]{0,15}$/;

/** A message's public id: the spec's `in_<n>` (inbound) or `out_<n>` (outbound). */
export const messageId = (direction: 'inbound' | 'outbound', n: number): string =>
  toId(direction === 'inbound' ? 'InboundMessage' : 'OutboundMessage', n);

/** A message id's direction and number; null for anything else (a bare number included). */
export function parseMessageId(id: string): { direction: 'inbound' | 'outbound'; n: number } | null {
  const kind = kindOfId(id);
  if (kind?.kind === 'InboundMessage') return { direction: 'inbound', n: kind.n };
  if (kind?.kind === 'OutboundMessage') return { direction: 'outbound', n: kind.n };
  return null;
}

/** The form of an id of this kind, for documents (OpenAPI); ids above 2^31−1 match it but are unknown. */
export const idPattern = (kind: IdKind): string =>
  kind === 'Message' ? '^(in|out)_[1-9][0-9]{0,9}$' : `^${prefixes[kind]}_[1-9][0-9]{0,9}$`;

/** Parses `<prefix>_<n>`; returns null when the string is not an id of that kind. */
export function tryParseId(kind: IdKind, id: string): number | null {
  const p = prefixes[kind];
  if (typeof id !== 'string' || !id.startsWith(`${p}_`)) return null;
  const rest = id.slice(p.length + 1);
  if (!numeric.test(rest)) return null;
  const n = Number(rest);
  return Number.isSafeInteger(n) && n <= 2_147_483_647 ? n : null;
}

export function parseIdOr404(kind: IdKind, id: string, what: string): number {
  const n = tryParseId(kind, id);
  if (n == null) throw notFound(what, id);
  return n;
}

export function kindOfId(id: string): { kind: IdKind; n: number } | null {
  const i = id.lastIndexOf('_');
  if (i <= 0) return null;
  const kind = kindByPrefix.get(id.slice(0, i));
  if (!kind) return null;
  const n = tryParseId(kind, id);
  return n == null ? null : { kind, n };
}
