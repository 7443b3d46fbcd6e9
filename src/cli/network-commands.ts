import { type Command, Option } from 'commander';
import { limitsOf, loadConfig } from '../lib/config.ts';
import { toId } from '../lib/ids.ts';
import { pgMediaStore } from '../media/store.ts';
import { inboundEvent } from '../network/sandbox.ts';
import { SANDBOX_TEMPLATES } from '../network/sandbox-templates.ts';
import { mediaCopier } from '../server/chat-deps.ts';
import { recordNetworkEvent } from '../services/chat/network-events.ts';
import { PATIENT_MEDIA_TYPES, patientMessage, patientReaction } from '../services/chat/patient-side.ts';
import { replaceTemplates } from '../services/chat/template-sync.ts';
import { testClinic, withDb } from './run.ts';

/** `network inbound|react|sync-templates`: the sandbox network playing the patients' side for a test clinic. */
export function networkCommands(program: Command): void {
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
}
