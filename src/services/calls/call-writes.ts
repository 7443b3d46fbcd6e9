import { readByIds } from '../../db/list.ts';
import { Call as CallEntity, Clinic, Patient } from '../../entities/index.ts';
import { DOWNLOAD_URL_RULE } from '../../lib/address-policy.ts';
import { AppError, invalid, notFound } from '../../lib/errors.ts';
import { tryParseId } from '../../lib/ids.ts';
import { type RequestContext, readsOf } from '../../lib/request-context.ts';
import { CREDENTIALS_REFUSAL, carriesCredentials } from '../../lib/url-credentials.ts';
import { clinicRef } from '../clinic-ref.ts';
import { requiredPhoneOf } from '../contact-input.ts';
import { restGroups } from '../resource.ts';
import { text, z } from '../write-input.ts';
import { createInputOf, updateInputOf } from '../write-inputs-of.ts';
import { checkVersion, defineWrite, type WriteContext } from '../writes.ts';
import { Call, MAX_DURATION, Speaker, TranscriptStatus } from './call.resource.ts';

/**
 * Calls, as the clinic's phone system reports them (issue 16; spec, Call ordering): the call once
 * it ended (call.completed), a staff note (call.updated), the recording (downloaded through the
 * media path, call.recording.available), then at most one transcript (call.transcript.completed
 * or .failed). Every event carries the whole call.
 */
export const createCallInput = createInputOf(Call);

export const updateCallInput = updateInputOf(Call, {
  // Required, unlike a change's other fields: the change sets the note, or (null) clears it.
  note: Call.fields.note.write.input.nullable().meta({ description: "The staff's note; null clears it." }),
});

/** A phone system's clock may run a little ahead of ours; a call later than this has not ended yet. */
const FUTURE_SKEW_MS = 5 * 60_000;
const SEGMENTS_MAX = 2000;
const SEGMENT_TEXT_MAX = 2000;
const SUMMARY_MAX = 4000;

/** Hand-written: a link the service downloads from, not a field of the call. */
export const addCallRecordingInput = z.strictObject({
  url: z
    .string()
    .max(2048)
    .refine((url) => !carriesCredentials(url), CREDENTIALS_REFUSAL)
    .meta({
      description: `Where the phone system holds the audio: ${DOWNLOAD_URL_RULE}, without a user name or password (a presigned link that lasts a few minutes will do). The service downloads it and keeps its own copy.`,
    }),
});

const seconds = z.number().min(0).max(MAX_DURATION);

const segment = z
  .strictObject({
    start: seconds.meta({ description: 'Seconds from the start of the call.' }),
    end: seconds.meta({ description: 'Seconds from the start of the call; not before start.' }),
    speaker: z.enum(Speaker.values).meta({ description: 'Who spoke: the clinic or the patient.' }),
    text: text(SEGMENT_TEXT_MAX).meta({ description: 'What was said.' }),
  })
  .superRefine((s, ctx) => {
    if (s.end < s.start) ctx.addIssue({ code: 'custom', path: ['end'], message: 'must not be before start' });
  });

/** Hand-written: one body for three columns (status, summary, segments), whose rules bind them together. */
export const addCallTranscriptInput = z
  .strictObject({
    status: z.enum(TranscriptStatus.values).meta({
      description:
        'Whether the transcription completed (segments required) or failed (no summary, no segments).',
    }),
    summary: text(SUMMARY_MAX).nullable().optional().meta({ description: 'completed only.' }),
    segments: z
      .array(segment)
      .max(SEGMENTS_MAX)
      .optional()
      .meta({ description: 'completed only (and required then): the whole transcript, in order.' }),
  })
  .superRefine((body, ctx) => {
    if (body.status === 'failed') {
      for (const key of ['summary', 'segments'] as const)
        if (body[key] != null)
          ctx.addIssue({ code: 'custom', path: [key], message: 'a failed transcript has none' });
    } else if (body.segments === undefined)
      ctx.addIssue({
        code: 'invalid_type',
        expected: 'array',
        input: undefined,
        path: ['segments'],
        message: 'required for a completed transcript',
      });
    body.segments?.forEach((s, i) => {
      const before = body.segments?.[i - 1];
      if (before && s.start < before.start)
        ctx.addIssue({
          code: 'custom',
          path: ['segments', i, 'start'],
          message: 'segments go in order of start',
        });
    });
  });

/** The patient on the other side, matched by phone as chat matches (the oldest, when a number is shared). */
async function patientOf(w: WriteContext, phone: string | null): Promise<Patient | null> {
  if (!phone) return null;
  return w.em.findOne(Patient, { phone }, { orderBy: { id: 'asc' } });
}

export const createCall = defineWrite({
  name: 'createCall',
  method: 'POST',
  path: '/calls',
  status: 201,
  tag: 'Calls',
  summary: 'Report a completed call',
  description:
    "From the clinic's phone system, once the call ended. The patient is matched by the other side's phone (from for an inbound call, to for an outbound one). Records call.completed, with recording.available false and transcript.status null.",
  scopes: ['calls:write'],
  input: createCallInput,
  example: {
    direction: 'inbound',
    from: '050-123-4567',
    to: '03-555-0100',
    started_at: '2026-10-30T09:30:00+02:00',
    duration: 184,
    answered: true,
    recorded: true,
  },
  resource: Call,
  event: 'call.completed',
  async run(w, input) {
    const from = input.from === null ? null : requiredPhoneOf(w, input.from, 'from');
    const to = requiredPhoneOf(w, input.to, 'to');
    if (from === null && input.direction === 'outbound')
      throw invalid(
        'from',
        'from: an outbound call is made from the clinic’s number; only a caller may withhold one.',
      );
    if (input.started_at.getTime() + input.duration * 1000 > w.now.getTime() + FUTURE_SKEW_MS)
      throw invalid(
        'started_at',
        'started_at: the call ends in the future; report a call once it has ended.',
      );
    const call = w.em.create(CallEntity, {
      clinic: clinicRef(w),
      patient: await patientOf(w, input.direction === 'inbound' ? from : to),
      ...(w.insertFields(input) as Pick<
        CallEntity,
        'direction' | 'startedAt' | 'durationSeconds' | 'answered' | 'recorded'
      >),
      fromPhone: from,
      toPhone: to,
      endedAt: new Date(input.started_at.getTime() + input.duration * 1000),
      recordingAvailable: false,
      recordingPath: null,
      recordingMime: null,
      transcriptStatus: null,
      transcriptSummary: null,
      transcriptSegments: null,
    });
    await w.em.flush();
    return call.id;
  },
});

export const updateCall = defineWrite({
  name: 'updateCall',
  method: 'PATCH',
  path: '/calls/:id',
  ids: { id: 'Call' },
  status: 200,
  tag: 'Calls',
  summary: "Set a call's note",
  description: "Adds, changes or (null) clears the staff's note. Records call.updated.",
  scopes: ['calls:write'],
  input: updateCallInput,
  example: { note: 'Wants to move Tuesday’s appointment; call back after 16:00.' },
  resource: Call,
  event: 'call.updated',
  async run(w, input, id) {
    const call = await w.load(CallEntity, 'Call', id);
    w.setFields(call, input);
    return call.id;
  },
});

/** What a recording needs of its call: recorded, and no recording yet (one per call). */
function checkRecordable(call: { recorded: boolean; recordingAvailable: boolean }, id: string | undefined) {
  if (!call.recorded)
    throw invalid(
      'recorded',
      `Call ${id} was not recorded (recorded is false): there is no recording to add.`,
    );
  if (call.recordingAvailable)
    throw new AppError('conflict', `Call ${id} has its recording already; a call has one.`);
}

const recordableRead = { fields: ['updatedAt', 'recorded', 'recordingAvailable'], joins: {} };

export const addCallRecording = defineWrite({
  name: 'addCallRecording',
  method: 'POST',
  path: '/calls/:id/recording',
  ids: { id: 'Call' },
  status: 200,
  tag: 'Calls',
  summary: "Add a call's recording",
  description: `Downloads the audio at url (${DOWNLOAD_URL_RULE}; MP3, WAV, Ogg/Opus, M4A/MP4, WebM, FLAC, AAC or AMR, sniffed from its bytes; up to the media size limit) and keeps the service’s own copy; GET /v1/calls/{id}/recording then links to it. Only for a call reported with recorded: true (else 422, param recorded); a call has one recording (a second is a 409). Records call.recording.available.`,
  scopes: ['calls:write'],
  input: addCallRecordingInput,
  example: { url: 'https://pbx.example.com/recordings/8841.mp3' },
  resource: Call,
  event: 'call.recording.available',
  errors: {
    '409': {
      code: 'conflict',
      description:
        '`conflict`: the call has its recording already, or the Idempotency-Key was used with another body.',
      message: 'Call call_12 has its recording already; a call has one.',
    },
  },
  // The download happens here, before the transaction: it takes seconds, and a transaction held
  // open that long would hold a connection and the call's row lock with it. What cannot succeed
  // is refused before anything is downloaded.
  async prepare(ctx: RequestContext, input, id, expected) {
    const n = id == null ? null : tryParseId('Call', id);
    const [row] = n == null ? [null] : await readByIds(readsOf(ctx), CallEntity, recordableRead, [n]);
    if (!row) throw notFound('call', String(id));
    checkVersion('Call', row.updatedAt, expected);
    checkRecordable(row as { recorded: boolean; recordingAvailable: boolean }, id);
    return ctx.services.calls.recordings.keep(ctx.principal.clinicId, ctx.principal.clinicMode, input.url);
  },
  async run(w, _input, id, kept) {
    const call = await w.load(CallEntity, 'Call', id);
    // Again under the lock: a concurrent upload may have won meanwhile (its copy then stays
    // unreferenced in the store, as a failed chat send's does).
    checkRecordable(call, id);
    call.recordingAvailable = true;
    call.recordingPath = kept.key;
    call.recordingMime = kept.mime;
    return call.id;
  },
});

/** Why a call gets no transcript (spec, Call ordering), as the 422 naming it. */
async function checkTranscribable(w: WriteContext, call: CallEntity, id: string | undefined) {
  if (call.transcriptStatus != null)
    throw new AppError(
      'conflict',
      `Call ${id} has its transcript already (${call.transcriptStatus}); a call has one.`,
    );
  const clinic = await w.em.findOneOrFail(Clinic, w.clinicId, { fields: ['aiTranscriptionEnabled'] });
  if (!clinic.aiTranscriptionEnabled)
    throw invalid(
      'ai_transcription_enabled',
      'This clinic has AI transcription off: its calls get no transcripts.',
    );
  if (!call.answered) throw invalid('answered', `Call ${id} was not answered: it gets no transcript.`);
  if (call.durationSeconds === 0)
    throw invalid('duration', `Call ${id} lasted 0 seconds: it gets no transcript.`);
  if (!call.recordingAvailable)
    throw invalid(
      'recording',
      `Call ${id} has no recording yet: a transcript comes after it (POST /v1/calls/${id}/recording first).`,
    );
}

export const addCallTranscript = defineWrite({
  name: 'addCallTranscript',
  method: 'POST',
  path: '/calls/:id/transcript',
  ids: { id: 'Call' },
  status: 200,
  tag: 'Calls',
  summary: "Add a call's transcript",
  description:
    'completed (with segments, and a summary) or failed (neither: none will arrive). Only after the recording (else 422, param recording), for an answered call (param answered) with a non-zero duration (param duration), at a clinic with AI transcription on (param ai_transcription_enabled); a call has one transcript (a second is a 409). Records call.transcript.completed or call.transcript.failed.',
  scopes: ['calls:write'],
  input: addCallTranscriptInput,
  example: {
    status: 'completed',
    summary: 'The patient asked to move Tuesday’s check-up to Thursday morning; moved to 09:30.',
    segments: [
      { start: 0, end: 3.5, speaker: 'clinic', text: 'Smile Dental, good morning.' },
      { start: 3.8, end: 9.2, speaker: 'patient', text: 'Hi, I need to move my check-up on Tuesday.' },
      { start: 9.6, end: 14, speaker: 'clinic', text: 'Of course. Would Thursday at 9:30 work?' },
    ],
  },
  resource: Call,
  // The event's type follows the body (completed or failed): recorded by `run` (`also`).
  event: undefined,
  errors: {
    '409': {
      code: 'conflict',
      description:
        '`conflict`: the call has its transcript already, or the Idempotency-Key was used with another body.',
      message: 'Call call_12 has its transcript already (completed); a call has one.',
    },
  },
  async run(w, input, id) {
    const call = await w.load(CallEntity, 'Call', id);
    await checkTranscribable(w, call, id);
    const segments = input.segments ?? null;
    segments?.forEach((s, i) => {
      if (s.end > call.durationSeconds)
        throw invalid(
          `segments[${i}].end`,
          `segments[${i}].end: after the end of the call (${call.durationSeconds} s).`,
        );
    });
    call.transcriptStatus = input.status;
    call.transcriptSummary = input.status === 'completed' ? (input.summary ?? null) : null;
    call.transcriptSegments = segments;
    const type = `call.transcript.${input.status}`;
    return { id: call.id, also: [{ type, resource: Call, id: call.id, groups: restGroups(true, []) }] };
  },
});
