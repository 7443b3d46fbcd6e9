import { defineResource, f, type Row } from '../resource.ts';

/** Why a template cannot be sent through this API, or null when it can (spec: Sendable). */
export function notSendableReason(t: Row): string | null {
  if (t.status !== 'APPROVED') return `The template is not approved (status ${t.status ?? 'unknown'}).`;
  if (!t.hasActiveVersion) return 'The template has no active approved version.';
  if (t.modelType != null && t.modelType !== 'wa_chat_preview')
    return `The template is bound to an internal record (${t.modelType}); only the clinic's own software can fill it.`;
  return null;
}

const sendableNeeds = ['status', 'hasActiveVersion', 'modelType'];

export const Template = defineResource({
  name: 'Template',
  kind: 'Template',
  scopes: ['chat:read'],
  description: "A message template of the clinic's messaging number.",
  fields: {
    id: f.id({ description: 'The template (tpl_<n>).' }),
    name: f.column('name', 'String', { description: 'The identifier used when sending.' }),
    display_name: f.column('displayName', 'String', { nullable: true, description: 'A readable name.' }),
    language: f.column('language', 'String', { nullable: true, description: 'Language code.' }),
    model_type: f.column('modelType', 'String', {
      nullable: true,
      description: 'What it attaches to; null or wa_chat_preview means only a phone number is needed.',
    }),
    category: f.column('category', 'String', {
      nullable: true,
      description: 'Billing category, e.g. UTILITY or MARKETING.',
    }),
    status: f.column('status', 'String', {
      nullable: true,
      description: 'Review state; only APPROVED can be sent.',
    }),
    rejection_reason: f.column('rejectionReason', 'String', {
      nullable: true,
      description: "The messaging network's reason when it rejected the template.",
    }),
    parameter_count: f.column('parameterCount', 'Int', {
      nullable: true,
      description: 'Number of {{n}} placeholders; params must have exactly this length.',
    }),
    body: f.column('body', 'String', { nullable: true, description: 'Body with placeholders.' }),
    header: f.column('header', 'JSON', {
      nullable: true,
      description: 'The header as the messaging network describes it; null without one.',
    }),
    footer: f.column('footer', 'JSON', {
      nullable: true,
      description: 'The footer as the messaging network describes it; null without one.',
    }),
    buttons: f.column('buttons', 'JSON', {
      nullable: true,
      description: 'The buttons as the messaging network describes them; null without any.',
    }),
    sendable: f.derived(sendableNeeds, 'Boolean', (row) => notSendableReason(row) === null, {
      description: 'Whether this API can send it.',
    }),
    not_sendable_reason: f.derived(sendableNeeds, 'String', (row) => notSendableReason(row), {
      nullable: true,
      description: 'Set when sendable is false.',
    }),
  },
});
