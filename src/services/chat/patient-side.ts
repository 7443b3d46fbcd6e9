import type { EntityManager } from '@mikro-orm/postgresql';
import { Clinic, Message } from '../../entities/index.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { parseMessageId } from '../../lib/ids.ts';
import { toE164 } from '../../lib/phone.ts';
import { CREDENTIALS_REFUSAL, carriesCredentials } from '../../lib/url-credentials.ts';
import { MEDIA_MIMES, type PatientMessage } from '../../network/sandbox.ts';
import { isSingleEmoji } from './emoji.ts';
import { InboundMediaType } from './message.resource.ts';

/**
 * The patient's side of the sandbox, for people trying the API and for tests: what the CLI's
 * `network inbound` / `network react` and the sandbox-only GraphQL mutations are asked, checked
 * and turned into what the network would report (src/network/sandbox.ts).
 */
export const PATIENT_MEDIA_TYPES = InboundMediaType.values;
type PatientMediaType = (typeof PATIENT_MEDIA_TYPES)[number];

const invalid = (param: string, message: string) => new AppError('validation_failed', message, { param });

async function clinicOf(em: EntityManager, clinicId: number): Promise<Clinic & { phone: string }> {
  const clinic = await em.findOne(Clinic, clinicId);
  if (!clinic) throw notFound('clinic', String(clinicId));
  if (!clinic.phone) throw invalid('clinic', 'The clinic has no messaging number; give it one first.');
  return clinic as Clinic & { phone: string };
}

export async function patientMessage(
  em: EntityManager,
  clinicId: number,
  input: {
    from: string;
    text?: string | null;
    name?: string | null;
    mediaUrl?: string | null;
    mediaType?: string | null;
    replyTo?: string | null;
  },
): Promise<PatientMessage> {
  const clinic = await clinicOf(em, clinicId);
  const from = toE164(input.from, clinic.country);
  if (!from) throw invalid('from', `from '${input.from}' is not a phone number.`);
  if (!!input.mediaUrl !== !!input.mediaType)
    throw invalid(input.mediaUrl ? 'media-type' : 'media-url', 'media-url and media-type go together.');
  if (input.mediaType && !(PATIENT_MEDIA_TYPES as readonly string[]).includes(input.mediaType))
    throw invalid('media-type', `media-type must be one of ${PATIENT_MEDIA_TYPES.join(', ')}.`);
  if (!input.text && !input.mediaUrl) throw invalid('text', 'Give text, media, or both.');
  if (input.mediaUrl && carriesCredentials(input.mediaUrl))
    throw invalid('media-url', `media-url ${CREDENTIALS_REFUSAL}.`);
  let replyTo: string | null = null;
  if (input.replyTo) {
    const id = parseMessageId(input.replyTo);
    const m =
      id?.direction === 'outbound'
        ? await em.findOne(Message, { id: id.n, clinic: clinicId, direction: 'outbound' }, { filters: false })
        : null;
    if (!m)
      throw invalid('reply-to', `reply-to '${input.replyTo}' is not an outbound message of this clinic.`);
    if (!m.networkMessageId) throw invalid('reply-to', `${input.replyTo} has not reached the network yet.`);
    replyTo = m.networkMessageId;
  }
  const type = input.mediaType as PatientMediaType | undefined;
  return {
    clinicPhone: clinic.phone,
    from,
    text: input.text ?? null,
    profileName: input.name ?? null,
    media: type && input.mediaUrl ? { url: input.mediaUrl, type, mime: MEDIA_MIMES[type] } : null,
    replyToNetworkMessageId: replyTo,
  };
}

/** The patient reacts to a message of their conversation (null withdraws the reaction). */
export async function patientReaction(
  em: EntityManager,
  clinicId: number,
  input: { message: string; emoji: string | null },
) {
  const clinic = await clinicOf(em, clinicId);
  if (input.emoji !== null && !isSingleEmoji(input.emoji))
    throw invalid('emoji', 'emoji must be a single emoji (or none, to withdraw the reaction).');
  const id = parseMessageId(input.message);
  const m = id
    ? await em.findOne(Message, { id: id.n, clinic: clinicId, direction: id.direction }, { filters: false })
    : null;
  if (!m) throw notFound('message', input.message);
  if (!m.networkMessageId) throw invalid('message', `${input.message} has not reached the network yet.`);
  return {
    clinicPhone: clinic.phone,
    from: m.patientPhone,
    networkMessageId: m.networkMessageId,
    emoji: input.emoji,
  };
}
