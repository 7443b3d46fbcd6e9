import type { EntityManager } from '@mikro-orm/postgresql';
import { allScopes } from '../../auth/scopes.ts';
import { Clinic, Event } from '../../entities/index.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import { toId } from '../../lib/ids.ts';
import {
  type AppServices,
  authenticated,
  newRequest,
  type RequestContext,
} from '../../lib/request-context.ts';
import { performWrite, type WriteOperation } from '../writes.ts';
import { addCallRecording, addCallTranscript, createCall } from './call-writes.ts';

/**
 * The clinic's phone system, played from the CLI (`phone call`): one call's sequence through the
 * same write operations the API runs (performWrite: the body checked, the change and its event
 * in one transaction), with pauses between the steps as a real phone system has (the recording
 * minutes after the call, the transcript after that), so a user watching the events sees them
 * arrive in the spec's order: call.completed, call.recording.available, call.transcript.*.
 */
export interface PhoneCall {
  from: string;
  /** Default: the clinic's own number. */
  to?: string;
  answered: boolean;
  /** Seconds; default 95 when answered, else 0. */
  duration?: number;
  /** Where the phone system holds the recording (given: the call is recorded). */
  recordingUrl?: string;
  transcript?: 'completed' | 'failed';
}

export interface EventEnvelope {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

export interface PhoneSystem {
  /** Waits between two steps (0 in tests). */
  pause(): Promise<void>;
  /** Each event of the call, as soon as its write committed. */
  onEvent(e: EventEnvelope): void;
}

/** A request context of the clinic for writes from the shell: every scope, no API key (so no Idempotency-Key). */
export async function phoneSystemContext(
  root: EntityManager,
  clinicId: number,
  clock: Clock,
  services: Pick<AppServices, 'calls' | 'writes'>,
): Promise<RequestContext> {
  const clinic = await root.fork().findOne(Clinic, clinicId);
  if (!clinic) throw new AppError('not_found', `No clinic with id '${toId('Clinic', clinicId)}'.`);
  const principal = {
    keyId: 'cli',
    clinicId,
    clinicKind: clinic.kind,
    clinicMode: clinic.mode,
    country: clinic.country,
    scopes: new Set<string>(allScopes),
  };
  const ctx = authenticated(
    newRequest(clock, () => {}),
    principal,
    root,
    false,
  );
  ctx.services = services as AppServices;
  return ctx;
}

/** Plays the call; answers the call as it stands at the end (its last event's data). */
export async function playCall(
  ctx: RequestContext,
  call: PhoneCall,
  system: PhoneSystem,
): Promise<Record<string, unknown>> {
  const clinic = await ctx.em.findOneOrFail(Clinic, ctx.principal.clinicId);
  const to = call.to ?? clinic.phone;
  if (!to)
    throw new AppError('validation_failed', 'The clinic has no phone number of its own: give --to.', {
      param: 'to',
    });
  const duration = call.duration ?? (call.answered ? 95 : 0);
  const now = ctx.clock.now();
  let last = await lastEventId(ctx);
  let current: Record<string, unknown> = {};
  const step = async (op: WriteOperation<any, any>, body: Record<string, unknown>, id?: string) => {
    current = await performWrite(ctx, op as WriteOperation, body, id ? { id } : {});
    last = await reportEvents(ctx, String(current.id), last, system);
  };
  await step(createCall, {
    direction: 'inbound',
    from: call.from,
    to,
    // It has just ended.
    started_at: new Date(now.getTime() - duration * 1000).toISOString(),
    duration,
    answered: call.answered,
    recorded: call.recordingUrl !== undefined,
  });
  const id = String(current.id);
  if (call.recordingUrl !== undefined) {
    await system.pause();
    await step(addCallRecording, { url: call.recordingUrl }, id);
  }
  if (call.transcript) {
    await system.pause();
    await step(addCallTranscript, transcriptBody(call.transcript, duration), id);
  }
  return current;
}

/** A short made-up conversation within the call's length. */
function transcriptBody(status: 'completed' | 'failed', duration: number): Record<string, unknown> {
  if (status === 'failed') return { status };
  const lines: [string, string][] = [
    ['clinic', 'Good morning, how can I help?'],
    ['patient', 'Hi, I would like to move my appointment to next week.'],
    ['clinic', 'Of course. Tuesday at 9:30?'],
    ['patient', 'Perfect, thank you.'],
  ];
  const step = duration / lines.length;
  return {
    status,
    summary: 'The patient asked to move their appointment; moved to Tuesday 09:30.',
    segments: lines.map(([speaker, text], k) => ({
      start: Math.round(k * step * 10) / 10,
      end: Math.round((k + 1) * step * 10) / 10,
      speaker,
      text,
    })),
  };
}

async function lastEventId(ctx: RequestContext): Promise<number> {
  const [e] = await ctx.em.find(Event, {}, { orderBy: { id: 'desc' }, limit: 1, fields: ['id'] });
  return e?.id ?? 0;
}

/** Reports the call's events recorded since event `after`; answers the last event id seen. */
async function reportEvents(ctx: RequestContext, callId: string, after: number, system: PhoneSystem) {
  const events = await ctx.em.find(Event, { id: { $gt: after } }, { orderBy: { id: 'asc' } });
  for (const e of events)
    if (e.data.id === callId)
      system.onEvent({
        id: toId('Event', e.id),
        type: e.type,
        created_at: e.createdAt.toISOString(),
        data: e.data,
      });
  return events.at(-1)?.id ?? after;
}
