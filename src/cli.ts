/**
 * Administration from the shell: `npm run cli -- <command>` (see `--help`).
 *
 * Every command opens the database (DATABASE_URL, or the embedded PostgreSQL in DATA_DIR), applies
 * pending migrations, does its work and closes everything so the process exits by itself.
 * With `--json` a command prints exactly one JSON object on stdout, so scripts can parse it;
 * logs, progress and errors always go to stderr.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MikroORM } from '@mikro-orm/postgresql';
import cliProgress from 'cli-progress';
import { Command, Option } from 'commander';
import { ormConfig } from '../mikro-orm.config.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './auth/keys.ts';
import { allScopes } from './auth/scopes.ts';
import { listenAndForward } from './cli/events-listen.ts';
import { triggerSample } from './cli/events-trigger.ts';
import { DEMO_KEY_ROLES, seedDemo } from './demo/seed-demo.ts';
import { seedPatients } from './demo/seed-patients.ts';
import { Clinic, clinicKinds } from './entities/clinic.ts';
import { clinicModes } from './lib/clinic-mode.ts';
import { systemClock } from './lib/clock.ts';
import { limitsOf, loadConfig } from './lib/config.ts';
import { migrate, startDatabase } from './lib/database.ts';
import { AppError } from './lib/errors.ts';
import { parseIdOr404, toId } from './lib/ids.ts';
import { attachJobQueue } from './lib/job-queue.ts';
import { runRequest } from './lib/request-context.ts';
import { parseInstant } from './lib/timestamps.ts';
import { pgMediaStore } from './media/store.ts';
import { toneWav } from './media/wav.ts';
import { inboundEvent } from './network/sandbox.ts';
import { SANDBOX_TEMPLATES } from './network/sandbox-templates.ts';
import { callDeps } from './server/call-deps.ts';
import { mediaCopier } from './server/chat-deps.ts';
import { type RunningJobs, startJobs } from './server/jobs.ts';
import { type EventEnvelope, phoneSystemContext, playCall } from './services/calls/phone-system.ts';
import { recordNetworkEvent } from './services/chat/network-events.ts';
import { PATIENT_MEDIA_TYPES, patientMessage, patientReaction } from './services/chat/patient-side.ts';
import { replaceTemplates } from './services/chat/template-sync.ts';
import { createClinic, listClinics, updateClinic } from './services/clinics/clinics.ts';
import { requireTestClinic } from './services/clinics/test-mode.ts';
import { pruneEvents, retentionCutoff } from './services/events/retention.ts';

interface Run {
  em: EntityManager;
  json: boolean;
  /** Migrations applied while opening the database. */
  applied: string[];
  /** Prints the command's one result: the object with --json, the text otherwise. */
  out(data: unknown, text: string): void;
}

/** Cleanups of whatever is open, so Ctrl-C also stops the embedded PostgreSQL. */
const cleanups: (() => Promise<void>)[] = [];

async function cleanup(): Promise<void> {
  while (cleanups.length) {
    try {
      await cleanups.pop()?.();
    } catch (err) {
      process.stderr.write(`warning: cleanup failed: ${(err as Error).message}\n`);
    }
  }
}

/** Wraps a command body: database up, migrations, the body, database down. */
function withDb<A extends unknown[]>(body: (run: Run, ...args: A) => Promise<void>) {
  return async (...args: A) => {
    // commander passes (...arguments, options, command); the command knows the global --json.
    const command = args[args.length - 1] as Command;
    const json = Boolean(command.optsWithGlobals().json);
    const config = loadConfig();
    const db = await startDatabase({
      url: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      port: config.EMBEDDED_PG_PORT,
    });
    cleanups.push(() => db.stop());
    // MikroORM logs (the migrator's progress among them) go to stderr: stdout is the result only.
    const orm = await MikroORM.init(
      // The session address: the CLI migrates and takes the migration lock (src/lib/session-url.ts).
      ormConfig(config.DATABASE_SESSION_URL ?? db.url, {
        debug: false,
        logger: (m: string) => process.stderr.write(`${m}\n`),
      }),
    );
    cleanups.push(() => orm.close(true));
    const applied = await migrate(orm);
    // A write whose events have subscribers queues their deliveries: the queue starts then, once.
    let jobs: Promise<RunningJobs> | undefined;
    attachJobQueue(orm.em, async () => {
      jobs ??= startJobs({ orm });
      return (await jobs).queue;
    });
    cleanups.push(async () => (jobs ? (await jobs).stop(0) : undefined));
    const out = (data: unknown, text: string) => {
      process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${text}\n`);
    };
    await body({ em: orm.em.fork(), json, applied, out }, ...args);
    await cleanup();
  };
}

/** Accepts the public id (`cln_3`) or the bare number. */
function clinicId(value: string): number {
  return /^[1-9][0-9]*$/.test(value) ? Number(value) : parseIdOr404('Clinic', value, 'clinic');
}

/**
 * The clinic a sandbox command plays the outside world for: a test clinic only (docs/test-mode.md),
 * so no made-up patient, reaction, template or call ever reaches a live clinic.
 */
async function testClinic(em: EntityManager, value: string, command: string): Promise<Clinic> {
  const id = clinicId(value);
  const c = await em.findOne(Clinic, id);
  if (!c) throw new AppError('not_found', `No clinic with id '${toId('Clinic', id)}'.`);
  requireTestClinic(c.mode, command);
  return c;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new AppError('validation_failed', `Expected a whole number of 0 or more, got '${value}'.`);
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new AppError('validation_failed', `Expected a positive integer, got '${value}'.`);
  return n;
}

/** Plain aligned columns for humans; --json is the format for programs. */
function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)';
  const cell = (v: unknown) => (v == null ? '-' : Array.isArray(v) ? v.join(',') : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

const countWord = (n: number) => ['no', 'one', 'two', 'three', 'four', 'five', 'six'][n] ?? String(n);

const program = new Command()
  .name('cli')
  .description('clinic-gateway administration: migrations, demo data, clinics and API keys.')
  .option('--json', 'print exactly one JSON object on stdout')
  .showHelpAfterError('(add --help for usage)');

program
  .command('migrate')
  .description('apply pending database migrations (every command does this first)')
  .action(
    withDb(async ({ applied, out }) => {
      out({ applied }, applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
    }),
  );

program
  .command('seed')
  .description(
    `seed the demo (two clinics, their data and ${countWord(DEMO_KEY_ROLES.length)} API keys) into an empty database, or bulk patients into a clinic`,
  )
  .option('--clinic <id>', 'add bulk patients to this existing test clinic instead of seeding the demo')
  .option('--patients <n>', 'bulk: patients to add (default 1000); demo: patients per clinic (default 40)')
  .action(
    withDb(async ({ em, json, out }, opts: { clinic?: string; patients?: string }) => {
      const patients = opts.patients === undefined ? undefined : positiveInt(opts.patients);
      if (opts.clinic) {
        // Made-up patients go into test clinics only (docs/test-mode.md).
        const { id } = await testClinic(em, opts.clinic, 'seed --clinic');
        const total = patients ?? 1000;
        // The bar draws on stderr and only on a terminal; --json keeps stderr quiet as well.
        const bar = json
          ? null
          : new cliProgress.SingleBar(
              {
                stream: process.stderr,
                format: 'patients [{bar}] {value}/{total} {percentage}% | {duration_formatted}',
              },
              cliProgress.Presets.shades_classic,
            );
        const started = Date.now();
        try {
          // The first report (0) comes once the clinic is found, so an unknown id draws no bar.
          const res = await seedPatients(em, id, total, (done) =>
            done ? bar?.update(done) : bar?.start(total, 0),
          );
          bar?.stop();
          const ms = Date.now() - started;
          out(
            { clinic_id: toId('Clinic', id), ...res, duration_ms: ms },
            `Added ${res.patients} patients, ${res.owners} owners and ${res.appointments} appointments to ${toId('Clinic', id)} in ${(ms / 1000).toFixed(1)} s.`,
          );
        } finally {
          bar?.stop();
        }
        return;
      }
      const clinics = await em.count(Clinic, {});
      if (clinics > 0) {
        out(
          {
            seeded: false,
            reason: `The database already has ${clinics} clinic(s); the demo is only seeded into an empty database.`,
          },
          `The database already has ${clinics} clinic(s); the demo was not seeded.\nTo add patients to a clinic: seed --clinic <id> --patients <n>`,
        );
        return;
      }
      const demo = await seedDemo(em, { patientsPerClinic: patients });
      const keys = Object.entries(demo.keys).map(([name, k]) => ({ name, ...k }));
      out(
        { seeded: true, ...demo },
        [
          'Demo seeded.',
          '',
          table(demo.clinics, ['id', 'name', 'kind']),
          '',
          'API keys (shown only now; only their hashes are stored):',
          table(keys, ['name', 'id', 'clinic_id', 'key']),
        ].join('\n'),
      );
    }),
  );

const clinic = program.command('clinic').description('create and list clinics');

clinic
  .command('create')
  .description('create a clinic')
  .requiredOption('--name <name>', 'display name')
  .addOption(new Option('--kind <kind>', 'kind of clinic').choices(clinicKinds).makeOptionMandatory())
  .addOption(
    new Option(
      '--mode <mode>',
      'test (cg_test_ keys, the sandbox network, http and loopback URLs allowed) or live (cg_live_ keys, the configured network, public https only); for good',
    )
      .choices(clinicModes)
      .makeOptionMandatory(),
  )
  .requiredOption('--country <code>', 'ISO 3166 alpha-2 country code; phones are read in its conventions')
  .option('--phone <phone>', "the clinic's own messaging number")
  .option('--handled-marking', 'let integrations mark conversations handled')
  .action(
    withDb(
      async (
        { em, out },
        opts: {
          name: string;
          kind: string;
          mode: string;
          country: string;
          phone?: string;
          handledMarking?: boolean;
        },
      ) => {
        const c = await createClinic(em, {
          name: opts.name,
          kind: opts.kind,
          mode: opts.mode,
          country: opts.country,
          phone: opts.phone,
          handledMarkingEnabled: opts.handledMarking ?? false,
        });
        // The sandbox network holds every number's templates: a test clinic with a number gets them.
        if (c.phone && c.mode === 'test') await replaceTemplates(em, c.id, SANDBOX_TEMPLATES);
        const data = {
          id: toId('Clinic', c.id),
          name: c.name,
          kind: c.kind,
          mode: c.mode,
          country: c.country,
          phone: c.phone ?? null,
          handled_marking_enabled: c.handledMarkingEnabled,
        };
        out(data, `Created ${data.id} (${c.name}, ${c.kind}, ${c.mode}, ${c.country}).`);
      },
    ),
  );

clinic
  .command('list')
  .description('list clinics')
  .action(
    withDb(async ({ em, out }) => {
      const data = await listClinics(em);
      out({ data }, table(data, ['id', 'name', 'kind', 'mode', 'country', 'phone']));
    }),
  );

clinic
  .command('update')
  .description("change a clinic's settings")
  .requiredOption('--id <id>', 'the clinic, e.g. cln_1')
  .addOption(
    new Option('--handled-marking <on|off>', 'let integrations mark conversations handled').choices([
      'on',
      'off',
    ]),
  )
  .addOption(
    new Option('--ai-transcription <on|off>', 'transcripts of answered, recorded calls').choices([
      'on',
      'off',
    ]),
  )
  .action(
    withDb(
      async (
        { em, out },
        opts: { id: string; handledMarking?: 'on' | 'off'; aiTranscription?: 'on' | 'off' },
      ) => {
        const c = await updateClinic(em, clinicId(opts.id), {
          ...(opts.handledMarking ? { handledMarkingEnabled: opts.handledMarking === 'on' } : {}),
          ...(opts.aiTranscription ? { aiTranscriptionEnabled: opts.aiTranscription === 'on' } : {}),
        });
        const data = {
          id: toId('Clinic', c.id),
          handled_marking_enabled: c.handledMarkingEnabled,
          ai_transcription_enabled: c.aiTranscriptionEnabled,
        };
        const onOff = (v: boolean) => (v ? 'on' : 'off');
        out(
          data,
          `${data.id}: handled-marking ${onOff(c.handledMarkingEnabled)}, ai-transcription ${onOff(c.aiTranscriptionEnabled)}.`,
        );
      },
    ),
  );

const network = program
  .command('network')
  .description("the sandbox messaging network: play the patient's side (test clinics only)");

network
  .command('inbound')
  .description('a patient writes to the clinic (opens the 24-hour window)')
  .requiredOption('--clinic <id>', 'the clinic written to')
  .requiredOption('--from <phone>', "the patient's phone")
  .option('--text <text>', 'the message (or the caption of media)')
  .option('--name <profile>', "the patient's profile name on the network")
  .option('--media-url <url>', 'a file the network holds; the service copies it')
  .addOption(new Option('--media-type <type>', 'the kind of media').choices([...PATIENT_MEDIA_TYPES]))
  .option('--reply-to <id>', 'the outbound message replied to, e.g. out_12')
  .action(
    withDb(
      async (
        { em, out },
        opts: {
          clinic: string;
          from: string;
          text?: string;
          name?: string;
          mediaUrl?: string;
          mediaType?: string;
          replyTo?: string;
        },
      ) => {
        const { id } = await testClinic(em, opts.clinic, 'network inbound');
        const message = await patientMessage(em, id, {
          from: opts.from,
          text: opts.text,
          name: opts.name,
          mediaUrl: opts.mediaUrl,
          mediaType: opts.mediaType,
          replyTo: opts.replyTo,
        });
        const copy = mediaCopier(pgMediaStore(em), limitsOf(loadConfig()));
        const recorded = await recordNetworkEvent(em, inboundEvent(message, new Date()), copy);
        out(recorded, `Recorded ${recorded.id} in ${recorded.conversation_id}.`);
      },
    ),
  );

network
  .command('react')
  .description("the patient reacts to a message (an empty --emoji '' withdraws it)")
  .requiredOption('--clinic <id>', 'the clinic')
  .requiredOption('--message <id>', 'the message, e.g. out_12')
  .requiredOption('--emoji <emoji>', 'one emoji')
  .action(
    withDb(async ({ em, out }, opts: { clinic: string; message: string; emoji: string }) => {
      const { id } = await testClinic(em, opts.clinic, 'network react');
      const r = await patientReaction(em, id, {
        message: opts.message,
        emoji: opts.emoji === '' ? null : opts.emoji,
      });
      const recorded = await recordNetworkEvent(em, {
        type: 'reaction',
        network_message_id: r.networkMessageId,
        clinic_phone: r.clinicPhone,
        from: r.from,
        emoji: r.emoji,
        at: new Date().toISOString(),
      });
      out(recorded, `Reaction ${r.emoji ?? '(withdrawn)'} recorded on ${recorded.id}.`);
    }),
  );

network
  .command('sync-templates')
  .description("load the sandbox's templates into the clinic (the demo clinics have them)")
  .requiredOption('--clinic <id>', 'the clinic')
  .action(
    withDb(async ({ em, out }, opts: { clinic: string }) => {
      const { id } = await testClinic(em, opts.clinic, 'network sync-templates');
      await replaceTemplates(em, id, SANDBOX_TEMPLATES);
      out(
        { clinic_id: toId('Clinic', id), templates: SANDBOX_TEMPLATES.length },
        `Loaded ${SANDBOX_TEMPLATES.length} templates.`,
      );
    }),
  );

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
  .option('--delay <ms>', 'pause between the steps (default: PHONE_CALL_DELAY_MS, else 1500)', nonNegativeInt)
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
        const audio = opts.recording ? await serveAudio(toneWav(Math.min(opts.duration ?? 3, 3) || 1)) : null;
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

const key = program.command('key').description('create, list and revoke API keys');

key
  .command('create')
  .description('create an API key; the key is printed once and only its hash is kept')
  .requiredOption('--clinic <id>', 'the clinic the key acts for')
  .requiredOption(
    '--scopes <list>',
    `comma-separated scopes: ${allScopes.join(', ')} (chat:read and chat:write never together)`,
  )
  .requiredOption('--name <name>', 'what the key is for')
  .action(
    withDb(async ({ em, out }, opts: { clinic: string; scopes: string; name: string }) => {
      const scopes = opts.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const k = await createApiKey(em, { clinicId: clinicId(opts.clinic), name: opts.name, scopes });
      out(
        k,
        `Created ${k.id} for ${k.clinic_id} with ${k.scopes.join(', ')}.\nKey (shown only now): ${k.key}`,
      );
    }),
  );

key
  .command('list')
  .description('list API keys (never the keys themselves)')
  .option('--clinic <id>', 'only keys of this clinic')
  .action(
    withDb(async ({ em, out }, opts: { clinic?: string }) => {
      const data = await listApiKeys(em, opts.clinic ? clinicId(opts.clinic) : undefined);
      out({ data }, table(data, ['id', 'clinic_id', 'name', 'prefix', 'scopes', 'created_at', 'revoked_at']));
    }),
  );

key
  .command('revoke')
  .description('revoke an API key')
  .argument('<id>', 'key id, e.g. key_3')
  .action(
    withDb(async ({ em, out }, id: string) => {
      await revokeApiKey(em, id);
      out({ id, revoked: true }, `Revoked ${id}.`);
    }),
  );

const events = program.command('events').description('the outbox: every event the clinics recorded');

events
  .command('prune')
  .description(
    'delete events older than the retention period (EVENT_RETENTION_DAYS, default 30), every clinic’s, with their webhook deliveries; the service also does this every hour',
  )
  .option('--before <time>', 'delete the events created before this time instead (ISO 8601)')
  .action(
    withDb(async ({ em, out }, opts: { before?: string }) => {
      const days = limitsOf(loadConfig()).eventRetentionDays;
      if (opts.before === undefined && days === 0) {
        out({ deleted: 0, before: null }, 'EVENT_RETENTION_DAYS is 0: events are kept.');
        return;
      }
      const before =
        opts.before === undefined ? retentionCutoff(new Date(), days) : parseInstant(opts.before);
      if (!before)
        throw new AppError('validation_failed', `--before must be an ISO 8601 time, got '${opts.before}'.`);
      const deleted = await pruneEvents(em, before, { maxBatches: Number.POSITIVE_INFINITY });
      out(
        { deleted, before: before.toISOString() },
        `Deleted ${deleted} event(s) created before ${before.toISOString()}.`,
      );
    }),
  );

events
  .command('listen')
  .description(
    'subscribe to the events of a key (webhooks:manage) over the websocket and POST each one to a local receiver, signed as a webhook delivery; the secret, printed at start, stays the same for a key on this machine (or --secret); a lost connection (the service restarting) is made again with backoff and resumed after the last event, each event forwarded once; a refused or revoked key ends it (exit 1); runs until Ctrl-C',
  )
  .requiredOption('--key <key>', 'the API key (webhooks:manage; chat:read for chat.* events)')
  .requiredOption('--forward-to <url>', 'the receiver, e.g. http://localhost:4242/webhooks')
  .option('--types <types>', 'only these event types, comma-separated')
  .option(
    '--secret <secret>',
    'sign with this secret (e.g. your receiver’s configured whsec_…) instead of the one kept for the key in the user’s config folder',
  )
  .option('--url <url>', 'the service', 'http://127.0.0.1:4000')
  .action(async (opts: { key: string; forwardTo: string; types?: string; secret?: string; url: string }) => {
    // No database: the service's websocket is the whole source (src/cli/events-listen.ts).
    const listener = listenAndForward({
      url: opts.url,
      key: opts.key,
      forwardTo: opts.forwardTo,
      types: opts.types
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean),
      secret: opts.secret,
      print: (line) => process.stdout.write(`${line}\n`),
    });
    cleanups.push(() => listener.stop());
    await listener.done;
  });

events
  .command('trigger')
  .description(
    "send a sample event of a type to every enabled webhook subscription of the key's clinic that receives it, through the service's real queue and signing (POST /v1/events; test clinics only); its envelope carries test: true and its data is a fixed sample (docs/events.md, Sample events)",
  )
  .argument('<type>', 'the event type, e.g. appointment.created')
  .requiredOption('--key <key>', 'the API key (webhooks:manage; chat:read for chat.* types)')
  .option('--url <url>', 'the service', 'http://127.0.0.1:4000')
  .action(async (type: string, opts: { key: string; url: string }) => {
    const sent = await triggerSample({ url: opts.url, key: opts.key, type });
    process.stdout.write(
      `Sent ${sent.type} sample ${sent.id} to the clinic's subscriptions that receive it.\n`,
    );
  });

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  await program.parseAsync();
} catch (err) {
  // AppError messages are written for people; for anything else the stack helps, on request.
  const e = err as Error;
  const detail = !(err instanceof AppError) && process.env.DEBUG ? `\n${e?.stack}` : '';
  process.stderr.write(`error: ${e?.message ?? String(err)}${detail}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
// Exit explicitly, with the command's code, even if some library left a handle open.
process.exit(process.exitCode ?? 0);
