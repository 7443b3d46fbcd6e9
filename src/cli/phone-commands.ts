import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Command, Option } from 'commander';
import { systemClock } from '../lib/clock.ts';
import { limitsOf, loadConfig } from '../lib/config.ts';
import { runRequest } from '../lib/request-context.ts';
import { pgMediaStore } from '../media/store.ts';
import { toneWav } from '../media/wav.ts';
import { callDeps } from '../server/call-deps.ts';
import { type EventEnvelope, phoneSystemContext, playCall } from '../services/calls/phone-system.ts';
import { cleanups, nonNegativeInt, testClinic, withDb } from './run.ts';

/** `phone call`: the sandbox phone system playing a call for a test clinic. */
export function phoneCommands(program: Command): void {
  const phone = program
    .command('phone')
    .description(
      "the clinic's phone system, simulated: play a call from end to transcript (test clinics only)",
    );

  phone
    .command('call')
    .description(
      'a call ends at the clinic (call.completed); with --recording its recording arrives (call.recording.available), with --transcript then its transcript (call.transcript.*): the same writes as the API, a pause between steps, each event printed as it is recorded',
    )
    .requiredOption('--clinic <id>', 'the clinic called')
    .requiredOption('--from <phone>', "the caller's phone (a patient's: the call is matched to them)")
    .option('--to <phone>', "the number called (default: the clinic's own)")
    .option('--answered', 'the call was answered')
    .option('--duration <seconds>', 'how long it lasted (default 95 when answered, else 0)', nonNegativeInt)
    .option('--recording', 'the phone system recorded it; the recording follows (served from this process)')
    .addOption(
      new Option(
        '--transcript <status>',
        'then the transcript (needs --recording, an answered call and AI transcription on)',
      ).choices(['completed', 'failed']),
    )
    .option(
      '--delay <ms>',
      'pause between the steps (default: PHONE_CALL_DELAY_MS, else 1500)',
      nonNegativeInt,
    )
    .action(
      withDb(
        async (
          { em, json, out },
          opts: {
            clinic: string;
            from: string;
            to?: string;
            answered?: boolean;
            duration?: number;
            recording?: boolean;
            transcript?: 'completed' | 'failed';
            delay?: number;
          },
        ) => {
          const delay = opts.delay ?? nonNegativeInt(process.env.PHONE_CALL_DELAY_MS ?? '1500');
          const limits = limitsOf(loadConfig());
          // The phone system's copy of the recording: a generated WAV on a loopback port of this
          // process, which a test clinic (the only kind this command plays for) may fetch.
          const audio = opts.recording
            ? await serveAudio(toneWav(Math.min(opts.duration ?? 3, 3) || 1))
            : null;
          if (audio) cleanups.push(audio.close);
          const media = {
            store: pgMediaStore(em),
            secret: 'cli',
            baseUrl: () => 'http://localhost',
          };
          const { id } = await testClinic(em, opts.clinic, 'phone call');
          const ctx = await phoneSystemContext(em, id, systemClock, {
            calls: callDeps(media, limits, systemClock),
            writes: { idempotencyLeaseMs: limits.requestDeadlineMs + 60_000 },
          });
          const events: EventEnvelope[] = [];
          const data = await runRequest(ctx, () =>
            playCall(
              ctx,
              {
                from: opts.from,
                to: opts.to,
                answered: opts.answered ?? false,
                duration: opts.duration,
                recordingUrl: audio ? `${audio.url}/recording.wav` : undefined,
                transcript: opts.transcript,
              },
              {
                pause: () => new Promise((resolve) => setTimeout(resolve, delay)),
                onEvent: (e) => {
                  events.push(e);
                  // --json prints one object at the end; the progress goes to stderr meanwhile.
                  (json ? process.stderr : process.stdout).write(`${eventLine(e)}\n`);
                },
              },
            ),
          );
          out({ data, events }, `${data.id}: ${events.length} event(s).`);
        },
      ),
    );
}

/** One event as a line: time, type, the call and its two flags. */
function eventLine(e: EventEnvelope): string {
  const d = e.data as {
    id: string;
    recording?: { available: boolean };
    transcript?: { status: string | null };
  };
  return `${e.created_at}  ${e.id}  ${e.type.padEnd(26)} ${d.id}  recording.available=${d.recording?.available} transcript.status=${d.transcript?.status}`;
}

/** Serves `bytes` as audio/wav on a loopback port until closed. */
async function serveAudio(bytes: Buffer): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(bytes.length) });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
