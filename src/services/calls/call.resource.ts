import { defineEnum } from '../../lib/enums.ts';
import { toLocal } from '../../lib/phone.ts';
import { isoOf } from '../../lib/timestamps.ts';
import { Direction } from '../closed-sets.ts';
import { PatientSummary } from '../patients/patient.resource.ts';
import { createdAt, updatedAt } from '../record-times.ts';
import {
  defineResource,
  defineShape,
  type FieldWrite,
  f,
  type PresentContext,
  type Row,
} from '../resource.ts';
import { instant, text, z } from '../write-input.ts';

/**
 * A call reported by the clinic's phone system (docs/decisions.md, Calls). The spec names only
 * `recording.available` and `transcript.status`; the rest is decided there. Every call event
 * carries this object whole (its detailed GET), so a consumer can upsert on the call id.
 */
export const CallRecording = defineShape(
  'CallRecording',
  {
    available: f.key('available', 'Boolean', {
      description: 'The service holds its copy; GET /v1/calls/{id}/recording answers a link to it.',
    }),
  },
  "The call's recording.",
);

export const Speaker = defineEnum('Speaker', 'Who spoke a stretch of a call transcript.', {
  clinic: 'Someone at the clinic.',
  patient: 'The patient (or the caller).',
  unknown: 'Not told apart.',
});

export const TranscriptStatus = defineEnum('TranscriptStatus', "How a call's transcription ended.", {
  completed: 'Transcribed: the summary and segments are set.',
  failed: 'Transcription failed; none will arrive.',
});

export const TranscriptSegment = defineShape(
  'TranscriptSegment',
  {
    start: f.key('start', 'Float', { description: 'Seconds from the start of the call.' }),
    end: f.key('end', 'Float', { description: 'Seconds from the start of the call.' }),
    speaker: f.key('speaker', 'String', { enum: Speaker }),
    text: f.key('text', 'String', { description: 'What was said.' }),
  },
  'One stretch of speech.',
);

export const CallTranscript = defineShape(
  'CallTranscript',
  {
    status: f.key('status', 'String', {
      nullable: true,
      enum: TranscriptStatus,
      description: 'completed or failed; null while there is none (most calls never get one).',
    }),
    summary: f.key('summary', 'String', { nullable: true, description: 'Set by a completed transcript.' }),
    // A list of shapes under a key: f.key takes scalars only, so the field is spelt out.
    segments: {
      type: [TranscriptSegment],
      nullable: true,
      group: 'core',
      source: { kind: 'key', key: 'segments' },
      description: 'The whole transcript, in order; null unless completed.',
    },
  },
  "The call's transcript: sent after the recording, for answered calls with a non-zero duration at clinics with AI transcription on.",
);

/** The longest note a call keeps. */
const NOTE_MAX = 4000;
/** A day: no phone call is longer. */
export const MAX_DURATION = 86_400;

/** What the phone system reports of the call: its create gives it, its change does not. */
const reported = { on: 'create' } as const;

/** Read with the clinic's country and kept in E.164 by the create's `run`. */
const phoneInput = text(40).meta({
  description: "A phone number, read with the clinic's country (050-123-4567, +972501234567).",
});

/** Phones as the API shows a patient's: local form (`0…`), international (`+…`) for a number of another country. */
const phone = <const W extends FieldWrite>(prop: 'fromPhone' | 'toPhone', description: string, write: W) =>
  f.column(prop, 'String', {
    nullable: true,
    convert: (v, pc: PresentContext) => toLocal(v, pc.country),
    description,
    write,
  });

export const Call = defineResource({
  name: 'Call',
  kind: 'Call',
  scopes: ['calls:read'],
  description: "A completed phone call, as the clinic's phone system reported it.",
  fields: {
    id: f.id({ description: 'The call id (call_…).' }),
    // As a treatment's: read on its own (top-level list, by id, event data), the patient is
    // joined with the include groups asked for (owner, species: one join level further).
    patient: f.join('patient', 'Patient', PatientSummary, {
      fromParent: true,
      nullable: true,
      description:
        "The patient whose phone is the other side's (the oldest such patient); null when none is.",
    }),
    direction: f.column('direction', 'String', {
      enum: Direction,
      write: {
        ...reported,
        input: z.enum(Direction.values),
        description: 'Which way the call went: to the clinic (inbound) or from it (outbound).',
      },
    }),
    from: phone('fromPhone', 'The calling number; null when the caller withheld it.', {
      ...reported,
      input: phoneInput,
      description: 'The calling number; null for a withheld one (inbound only).',
      // Given always: null says the caller withheld it, not that the phone system left it out.
      create: 'required-nullable',
      byRun: true,
    }),
    // The column allows null; a reported call always names the number it reached.
    to: phone('toPhone', 'The called number.', {
      ...reported,
      input: phoneInput,
      description: 'The called number.',
      create: 'required',
      byRun: true,
    }),
    started_at: f.time('startedAt', {
      description: 'When the call started (ISO 8601, UTC).',
      write: { ...reported, input: instant, description: 'When the call started (rang).' },
    }),
    ended_at: f.derived(
      ['startedAt', 'durationSeconds'],
      'String',
      (row: Row) => isoOf(new Date(new Date(row.startedAt).getTime() + row.durationSeconds * 1000)),
      { description: 'When the call ended: its start plus its duration (ISO 8601, UTC).' },
    ),
    duration: f.column('durationSeconds', 'Int', {
      description: 'How long it lasted, in seconds, from its start to its end.',
      write: {
        ...reported,
        input: z.number().int().min(0).max(MAX_DURATION),
        description: 'Seconds from its start to the end of the call.',
      },
    }),
    answered: f.column('answered', 'Boolean', {
      description: 'Someone picked up.',
      write: { ...reported, input: z.boolean(), description: 'Someone picked up.' },
    }),
    recorded: f.column('recorded', 'Boolean', {
      description: 'The phone system recorded it; only then can a recording arrive.',
      write: {
        ...reported,
        input: z.boolean(),
        description: 'The phone system recorded it (a recording may follow).',
      },
    }),
    note: f.column('note', 'String', {
      nullable: true,
      description: "Staff's note (PATCH).",
      write: { on: 'both', input: text(NOTE_MAX), description: "The staff's note, up to 4000 characters." },
    }),
    recording: f.derived(
      ['recordingAvailable'],
      CallRecording,
      (row) => ({ available: row.recordingAvailable }),
      { description: 'Whether the recording can be fetched.' },
    ),
    transcript: f.derived(
      ['transcriptStatus', 'transcriptSummary', 'transcriptSegments'],
      CallTranscript,
      (row) => ({
        status: row.transcriptStatus ?? null,
        summary: row.transcriptSummary ?? null,
        segments: row.transcriptSegments ?? null,
      }),
      { description: 'The transcript: its status, summary and segments, all null while there is none.' },
    ),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
});
