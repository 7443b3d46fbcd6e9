import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { DEMO_KEY_ROLES, seedDemo } from '../demo/seed-demo.ts';
import { seedPatients } from '../demo/seed-patients.ts';
import { Clinic } from '../entities/clinic.ts';
import { toId } from '../lib/ids.ts';
import { countWord, positiveInt, table, testClinic, withDb } from './run.ts';

/** `migrate` and `seed`: the database itself, and the demo or bulk data in it. */
export function databaseCommands(program: Command): void {
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
}
