import type { Command } from 'commander';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/keys.ts';
import { allScopes } from '../auth/scopes.ts';
import { clinicId, table, withDb } from './run.ts';

/** `key create|list|revoke`. */
export function keyCommands(program: Command): void {
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
        out(
          { data },
          table(data, ['id', 'clinic_id', 'name', 'prefix', 'scopes', 'created_at', 'revoked_at']),
        );
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
}
