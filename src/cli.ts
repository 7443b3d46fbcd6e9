/**
 * Administration from the shell: `npm run cli -- <command>` (see `--help`).
 *
 * Every command opens the database (DATABASE_URL, or the embedded PostgreSQL in DATA_DIR), applies
 * pending migrations, does its work and closes everything so the process exits by itself.
 * With `--json` a command prints exactly one JSON object on stdout, so scripts can parse it;
 * logs, progress and errors always go to stderr.
 */
import { Command } from 'commander';
import { clinicCommands } from './cli/clinic-commands.ts';
import { databaseCommands } from './cli/database-commands.ts';
import { eventsCommands } from './cli/events-commands.ts';
import { keyCommands } from './cli/key-commands.ts';
import { networkCommands } from './cli/network-commands.ts';
import { phoneCommands } from './cli/phone-commands.ts';
import { cleanup } from './cli/run.ts';
import { AppError } from './lib/errors.ts';

const program = new Command()
  .name('cli')
  .description('clinic-gateway administration: migrations, demo data, clinics and API keys.')
  .option('--json', 'print exactly one JSON object on stdout')
  .showHelpAfterError('(add --help for usage)');

// In this order in --help.
databaseCommands(program);
clinicCommands(program);
networkCommands(program);
phoneCommands(program);
keyCommands(program);
eventsCommands(program);

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
