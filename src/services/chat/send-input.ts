import { AppError } from '../../lib/errors.ts';
import { toE164 } from '../../lib/phone.ts';
import { jsonObject } from '../json-body.ts';
import { CARD_REFUSAL, noCardNumber } from '../write-input.ts';

/**
 * The body of POST /v1/chat/messages (and the GraphQL send mutation's input), checked from raw
 * JSON: every refusal is a 422 naming the field.
 */
export const TEXT_MAX = 4096;
export const CAPTION_MAX = 1024;
export const PARAM_MAX = 1024;

export type SendInput =
  | { kind: 'text'; to: string; text: string }
  | { kind: 'template'; to: string; template: string; params: string[] }
  | {
      kind: 'media';
      to: string;
      media: { type: 'image' | 'document'; url: string; filename: string | null; caption: string | null };
    };

const invalid = (param: string, message: string) => new AppError('validation_failed', message, { param });
const present = (v: unknown) => v !== undefined && v !== null;

function text(v: unknown, param: string, max: number): string {
  if (typeof v !== 'string') throw invalid(param, `${param} must be a string.`);
  if (v.trim() === '') throw invalid(param, `${param} must not be empty.`);
  if ([...v].length > max) throw invalid(param, `${param} must be at most ${max} characters.`);
  if (v.includes('\u0000')) throw invalid(param, `${param} must not contain a NUL character.`);
  // Outbound text is stored, sent to the network and carried by events: the card-number rule of
  // every free-text field holds (src/services/write-input.ts, docs/decisions.md "Card numbers").
  if (!noCardNumber(v)) throw invalid(param, `${param} ${CARD_REFUSAL}.`);
  return v;
}

export function parseSendInput(raw: unknown, country: string): SendInput {
  const body = jsonObject(raw, ['to', 'text', 'template', 'params', 'media']);
  if (!present(body.to)) throw invalid('to', 'to is required: the patient phone number.');
  if (typeof body.to !== 'string') throw invalid('to', 'to must be a string.');
  const to = toE164(body.to, country);
  if (!to) throw invalid('to', `to '${body.to}' is not a phone number.`);
  const given = (['text', 'template', 'media'] as const).filter((k) => present(body[k]));
  if (given.length !== 1)
    throw invalid(
      given[1] ?? 'text',
      given.length
        ? `Send exactly one of text, template or media, not ${given.join(' and ')}.`
        : 'Send exactly one of text, template or media.',
    );
  if (present(body.params) && given[0] !== 'template')
    throw invalid('params', 'params go with template only.');
  if (given[0] === 'text') return { kind: 'text', to, text: text(body.text, 'text', TEXT_MAX) };
  if (given[0] === 'template') {
    const template = text(body.template, 'template', 512);
    const raw = body.params ?? [];
    if (!Array.isArray(raw)) throw invalid('params', 'params must be an array of strings.');
    const params = raw.map((p, i) => {
      if (typeof p !== 'string') throw invalid(`params[${i}]`, `params[${i}] must be a string.`);
      if ([...p].length > PARAM_MAX)
        throw invalid(`params[${i}]`, `params[${i}] must be at most ${PARAM_MAX} characters.`);
      if (!noCardNumber(p)) throw invalid(`params[${i}]`, `params[${i}] ${CARD_REFUSAL}.`);
      return p;
    });
    return { kind: 'template', to, template, params };
  }
  const m = jsonObject(body.media, ['type', 'url', 'filename', 'caption'], 'media', 'media.');
  if (m.type !== 'image' && m.type !== 'document')
    throw invalid('media.type', 'media.type must be image or document.');
  if (typeof m.url !== 'string' || m.url.length > 4096)
    throw invalid('media.url', 'media.url must be an https URL.');
  if (present(m.filename) && m.type !== 'document')
    throw invalid('media.filename', 'media.filename goes with documents only.');
  return {
    kind: 'media',
    to,
    media: {
      type: m.type,
      url: m.url,
      filename: present(m.filename) ? text(m.filename, 'media.filename', 255) : null,
      caption: present(m.caption) ? text(m.caption, 'media.caption', CAPTION_MAX) : null,
    },
  };
}
