import { toInternational, toLocal } from '../../lib/phone.ts';
import { requestTimeMs } from '../../lib/request-context.ts';
import { defineResource, f } from '../resource.ts';
import { MatchedPatients } from './matched-patients.ts';
import { windowExpiresAt } from './window.ts';

export const Conversation = defineResource({
  name: 'Conversation',
  kind: 'Conversation',
  scopes: ['chat:read'],
  description: 'One per patient phone number the clinic has exchanged messages with.',
  fields: {
    id: f.id(),
    display_name: f.column('displayName', 'String', {
      nullable: true,
      description: "The patient's profile name on the messaging network.",
    }),
    patient_phone: f.column('patientPhone', 'String', {
      nullable: true,
      convert: (v, pc) => toLocal(v, pc.country),
      description: 'Local form starting with 0.',
    }),
    clinic_phone: f.column('clinicPhone', 'String', {
      nullable: true,
      convert: (v) => toInternational(v),
      description: "The clinic's own number, international form (country code, no +).",
    }),
    last_message_preview: f.column('lastMessagePreview', 'String', {
      nullable: true,
      description: 'Text of the most recent message.',
    }),
    last_activity_at: f.time('lastActivityAt', {
      nullable: true,
      description: 'Last message either direction.',
    }),
    last_inbound_at: f.time('lastInboundAt', {
      nullable: true,
      description: 'Last message from the patient.',
    }),
    last_outbound_at: f.time('lastOutboundAt', {
      nullable: true,
      description: 'Last message to the patient.',
    }),
    is_handled: f.column('isHandled', 'Boolean', { description: 'Staff marked the thread dealt with.' }),
    free_text_window_expires_at: f.derived(
      ['lastInboundAt'],
      'String',
      (row) => windowExpiresAt(row.lastInboundAt, requestTimeMs()),
      {
        nullable: true,
        description: 'When the 24-hour free-text window closes; null means it is closed.',
      },
    ),
    patients: MatchedPatients.field('patientPhone'),
    created_at: f.time('createdAt', {
      nullable: true,
      description: 'When the first message either way was recorded.',
    }),
    updated_at: f.time('updatedAt', {
      nullable: true,
      description: 'Bumps on any change to the conversation or one of its messages.',
    }),
  },
});
