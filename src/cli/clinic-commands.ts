import { type Command, Option } from 'commander';
import { clinicKinds } from '../entities/clinic.ts';
import { clinicModes } from '../lib/clinic-mode.ts';
import { toId } from '../lib/ids.ts';
import { SANDBOX_TEMPLATES } from '../network/sandbox-templates.ts';
import { replaceTemplates } from '../services/chat/template-sync.ts';
import { createClinic, listClinics, updateClinic } from '../services/clinics/clinics.ts';
import { clinicId, table, withDb } from './run.ts';

/** `clinic create|list|update`. */
export function clinicCommands(program: Command): void {
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
}
