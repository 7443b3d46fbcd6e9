import { readByIds } from '../../db/list.ts';
import { Call as CallEntity } from '../../entities/index.ts';
import { notFound } from '../../lib/errors.ts';
import { toId, tryParseId } from '../../lib/ids.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import { MediaLink } from '../chat/media.ts';
import { newestFirst } from '../child-lists.ts';
import type { RecordList } from '../record-lists.ts';
import { defineShape, f } from '../resource.ts';
import { Call } from './call.resource.ts';
import type { CallDeps } from './deps.ts';

/** GET /v1/calls: the clinic's calls, newest first by started_at. */
export const callRecords: RecordList = {
  resource: Call,
  keyset: newestFirst('call', 'startedAt'),
  timeProp: 'startedAt',
  refs: { patient_id: ['patient', 'Patient'] },
};

/** The spec's Media link (`{url, expires_at}`), with the recording's type beside it. */
export const CallRecordingLink = defineShape(
  'CallRecordingLink',
  {
    ...MediaLink.fields,
    mime_type: f.key('mime_type', 'String', { description: 'audio/mpeg, audio/wav, audio/ogg, ...' }),
  },
  "A time-limited link to a call's recording.",
);

export interface RecordingLink {
  url: string;
  expires_at: string;
  mime_type: string;
}

/** The file name a recording is served under: `call_12.mp3`. */
const EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/ogg; codecs=opus': 'opus',
  'audio/opus': 'opus',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/aac': 'aac',
  'audio/flac': 'flac',
  'audio/amr': 'amr',
  'audio/webm': 'webm',
};

export const recordingFilename = (callId: number, mime: string) =>
  `${toId('Call', callId)}.${EXTENSIONS[mime] ?? 'audio'}`;

const recordingRead = { fields: ['recordingAvailable', 'recordingPath', 'recordingMime'], joins: {} };

/** GET /v1/calls/{id}/recording: 404 for a call that is not the clinic's and for one without a recording yet. */
export async function getCallRecording(
  ctx: ServiceContext,
  deps: CallDeps,
  id: string,
): Promise<RecordingLink> {
  const n = tryParseId('Call', id);
  const [row] = n == null ? [null] : await readByIds(readsOf(ctx), CallEntity, recordingRead, [n]);
  if (!row) throw notFound('call', id);
  if (!row.recordingAvailable || !row.recordingPath) throw notFound('recording of call', id);
  const mime = row.recordingMime ?? 'application/octet-stream';
  const link = deps.recordings.link(
    ctx.principal.clinicId,
    row.recordingPath,
    recordingFilename(row.id, mime),
    mime,
  );
  return { ...link, mime_type: mime };
}
