import { DOWNLOAD_URL_RULE } from '../../lib/address-policy.ts';
import { AppError } from '../../lib/errors.ts';
import { toE164 } from '../../lib/phone.ts';
import { CREDENTIALS_REFUSAL, carriesCredentials } from '../../lib/url-credentials.ts';
import { jsonObject } from '../json-body.ts';
import { CARD_REFUSAL, text as freeText, noCardNumber, z } from '../write-input.ts';
import { OutboundMediaType } from './message.resource.ts';

/**
 * The body of POST /v1/chat/messages (and the GraphQL send mutation's input), checked from raw
 * JSON: every refusal is a 422 naming the field.
 */
export const TEXT_MAX = 4096;
export const CAPTION_MAX = 1024;
export const PARAM_MAX = 1024;
const TEMPLATE_MAX = 512;
const FILENAME_MAX = 255;

/** What each field of the body means: one text for the OpenAPI body (src/rest/request-bodies.ts) and GraphQL's input. */
export const SEND_FIELDS = {
  body: 'Exactly one of `text`, `template` or `media`.',
  to: 'The patient phone; separators ignored, local (0…) or international.',
  text: 'Free text. Inside the 24-hour window it goes out as it is (`free_text`); outside it, wrapped in the clinic’s marketing template (`template_fallback`, billed as marketing).',
  template: 'Name of a sendable template (GET /v1/chat/templates?sendable=true).',
  params: "Positional: params[0] fills {{1}}. Exactly the template's parameter_count.",
  media: 'An image or a document, downloaded during the request.',
  mediaType: 'image (JPEG or PNG) or document (PDF).',
  mediaUrl: `A URL the service downloads during the request (up to 16 MB): ${DOWNLOAD_URL_RULE}, without a user name or password; a presigned link valid a few minutes suffices.`,
  mediaFilename:
    "Documents only: the name the patient sees; defaults to the URL's file name; .pdf appended when missing.",
  mediaCaption:
    'Sent as a text message right after the media, subject to the 24-hour window; reported under meta.caption.',
} as const;

/**
 * The body as a write definition describes it (`sendMessage.input`): what GraphQL's typed input
 * is made from. It checks nothing: `parseSendInput` below is the check, with the messages REST
 * clients rely on (which of text, template or media; params only with a template; filename only
 * for documents), none of which a field-by-field schema says.
 */
export const sendBody = z
  .strictObject({
    to: z.string().meta({ description: SEND_FIELDS.to }),
    text: freeText(TEXT_MAX).optional().meta({ description: SEND_FIELDS.text }),
    template: freeText(TEMPLATE_MAX).optional().meta({ description: SEND_FIELDS.template }),
    params: z.array(freeText(PARAM_MAX)).optional().meta({ description: SEND_FIELDS.params }),
    media: z
      .strictObject({
        type: z.enum(OutboundMediaType.values).meta({ description: SEND_FIELDS.mediaType }),
        url: z.string().meta({ description: SEND_FIELDS.mediaUrl }),
        filename: freeText(FILENAME_MAX).optional().meta({ description: SEND_FIELDS.mediaFilename }),
        caption: freeText(CAPTION_MAX).optional().meta({ description: SEND_FIELDS.mediaCaption }),
      })
      .optional()
      .meta({ description: SEND_FIELDS.media }),
  })
  .meta({ description: SEND_FIELDS.body });

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
    const template = text(body.template, 'template', TEMPLATE_MAX);
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
  if (carriesCredentials(m.url)) throw invalid('media.url', `media.url ${CREDENTIALS_REFUSAL}.`);
  if (present(m.filename) && m.type !== 'document')
    throw invalid('media.filename', 'media.filename goes with documents only.');
  return {
    kind: 'media',
    to,
    media: {
      type: m.type,
      url: m.url,
      filename: present(m.filename) ? text(m.filename, 'media.filename', FILENAME_MAX) : null,
      caption: present(m.caption) ? text(m.caption, 'media.caption', CAPTION_MAX) : null,
    },
  };
}
