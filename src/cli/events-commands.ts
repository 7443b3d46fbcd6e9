import type { Command } from 'commander';
import { limitsOf, loadConfig } from '../lib/config.ts';
import { AppError } from '../lib/errors.ts';
import { parseInstant } from '../lib/timestamps.ts';
import { pruneEvents, retentionCutoff } from '../services/events/retention.ts';
import { listenAndForward } from './events-listen.ts';
import { triggerSample } from './events-trigger.ts';
import { cleanups, withDb } from './run.ts';
import { defaultServiceUrl, URL_OPTION_HELP } from './service-url.ts';

/** `events prune|listen|trigger`: the outbox, and a local receiver of its events. */
export function eventsCommands(program: Command): void {
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
    .option('--url <url>', URL_OPTION_HELP)
    .action(
      async (opts: { key: string; forwardTo: string; types?: string; secret?: string; url?: string }) => {
        // No database: the service's websocket is the whole source (src/cli/events-listen.ts).
        const listener = listenAndForward({
          url: opts.url ?? defaultServiceUrl(),
          urlGiven: opts.url !== undefined,
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
      },
    );

  events
    .command('trigger')
    .description(
      "send a sample event of a type to every enabled webhook subscription of the key's clinic that receives it, through the service's real queue and signing (POST /v1/events; test clinics only); its envelope carries test: true and its data is a fixed sample (docs/events.md, Sample events)",
    )
    .argument('<type>', 'the event type, e.g. appointment.created')
    .requiredOption('--key <key>', 'the API key (webhooks:manage; chat:read for chat.* types)')
    .option('--url <url>', URL_OPTION_HELP)
    .action(async (type: string, opts: { key: string; url?: string }) => {
      const sent = await triggerSample({
        url: opts.url ?? defaultServiceUrl(),
        urlGiven: opts.url !== undefined,
        key: opts.key,
        type,
      });
      process.stdout.write(
        `Sent ${sent.type} sample ${sent.id} to the clinic's subscriptions that receive it.\n`,
      );
    });
}
