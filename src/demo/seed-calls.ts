import type { EntityManager } from '@mikro-orm/postgresql';
import { Call, type Clinic, Patient } from '../entities/index.ts';
import { pgMediaStore } from '../media/store.ts';
import { toneWav } from '../media/wav.ts';
import type { Rng } from './random.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type State = 'missed' | 'outbound' | 'unrecorded' | 'recorded' | 'transcribed' | 'transcript-failed';

const summaries = [
  'The patient asked to move next week’s appointment to a morning slot; moved to Tuesday 09:30.',
  'The patient asked about the invoice of the last visit; the clinic will send it by chat.',
  'The patient reported pain after the treatment; booked an emergency visit for today.',
];

/**
 * The demo's calls of one clinic (spec, Call ordering), every state there: missed, outbound,
 * answered but not recorded, recorded with the recording available, and (where the clinic has
 * AI transcription on) a completed transcript with a summary and segments and a failed one.
 * The recordings are one small generated WAV in the media store, so their links serve audio.
 * The dental demo clinic has AI transcription on, the veterinary one off (both cases to try).
 * Times are offsets from `now`; no events are written (a data load, as the rest of the seed).
 */
export async function seedCalls(em: EntityManager, clinic: Clinic, rng: Rng, now: Date): Promise<void> {
  if (clinic.kind === 'dental') clinic.aiTranscriptionEnabled = true;
  const patients = await em.find(
    Patient,
    { clinic: clinic.id, phone: { $ne: null } },
    { filters: false, orderBy: { id: 'asc' }, limit: 12 },
  );
  const line = clinic.phone ?? '+97235550100';
  const recording = await pgMediaStore(em).put(clinic.id, toneWav(2), 'audio/wav');
  const states: State[] = ['missed', 'outbound', 'unrecorded', 'recorded', 'missed', 'recorded', 'outbound'];
  if (clinic.aiTranscriptionEnabled)
    states.push('transcribed', 'transcript-failed', 'transcribed', 'recorded');
  for (const [i, state] of states.entries()) {
    // One caller no patient has: its call has no patient.
    const patient = i === 4 ? null : (patients[i % Math.max(1, patients.length)] ?? null);
    const other = patient?.phone ?? `+97254${rng.digits(7)}`;
    const outbound = state === 'outbound';
    const answered = state !== 'missed';
    const duration = answered ? rng.int(40, 420) : 0;
    const recorded = state === 'recorded' || state.startsWith('transcri');
    const startedAt = new Date(now.getTime() - (states.length - i) * 5 * HOUR - rng.int(0, 50) * MINUTE);
    const endedAt = new Date(startedAt.getTime() + duration * 1000);
    const reportedAt = new Date(endedAt.getTime() + 20_000);
    // The recording a few minutes after the call, the transcript a few after that (spec: 2 to 15).
    const changedAt = recorded ? new Date(reportedAt.getTime() + rng.int(2, 15) * MINUTE) : reportedAt;
    const transcript = transcriptOf(state, rng, duration);
    em.create(Call, {
      clinic,
      patient,
      direction: outbound ? 'outbound' : 'inbound',
      fromPhone: outbound ? line : other,
      toPhone: outbound ? other : line,
      startedAt,
      endedAt,
      durationSeconds: duration,
      answered,
      recorded,
      note:
        i % 3 === 2
          ? rng.pick(['Call back after 16:00', 'Asked for the price list', 'Left a message'])
          : null,
      recordingAvailable: recorded,
      recordingPath: recorded ? recording : null,
      recordingMime: recorded ? 'audio/wav' : null,
      ...transcript,
      createdAt: reportedAt,
      updatedAt: transcript.transcriptStatus ? new Date(changedAt.getTime() + 3 * MINUTE) : changedAt,
    });
  }
  await em.flush();
}

function transcriptOf(state: State, rng: Rng, duration: number) {
  if (state === 'transcript-failed')
    return { transcriptStatus: 'failed', transcriptSummary: null, transcriptSegments: null };
  if (state !== 'transcribed')
    return { transcriptStatus: null, transcriptSummary: null, transcriptSegments: null };
  const lines: [string, string][] = [
    ['clinic', 'Good morning, how can I help?'],
    ['patient', 'Hi, I would like to ask about my appointment.'],
    ['clinic', 'Of course, let me check the calendar.'],
    ['patient', 'Thank you.'],
  ];
  const step = Math.max(1, Math.floor(duration / lines.length));
  return {
    transcriptStatus: 'completed',
    transcriptSummary: rng.pick(summaries),
    transcriptSegments: lines.map(([speaker, text], k) => ({
      start: k * step,
      end: Math.min(duration, (k + 1) * step - 0.5),
      speaker,
      text,
    })),
  };
}
