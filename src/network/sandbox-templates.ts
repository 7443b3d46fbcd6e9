import type { NetworkTemplate } from './adapter.ts';

/**
 * The templates the sandbox holds for every clinic number: approved ones with and without
 * parameters, rejected and pending ones, one bound to an internal record, ones with header,
 * footer and buttons, the clinic's image and document templates (media goes out as these) and
 * the marketing template that carries free text outside the 24-hour window.
 */
const t = (x: Partial<NetworkTemplate> & { name: string }): NetworkTemplate => ({
  display_name: null,
  language: 'en',
  model_type: null,
  category: 'UTILITY',
  status: 'APPROVED',
  rejection_reason: null,
  parameter_count: 0,
  body: null,
  header: null,
  footer: null,
  buttons: null,
  ...x,
});

export const SANDBOX_TEMPLATES: (NetworkTemplate & { role?: 'image' | 'document' | 'fallback' })[] = [
  t({
    name: 'welcome_message',
    display_name: 'Welcome',
    language: 'he',
    parameter_count: 1,
    body: 'שלום {{1}}, ברוכים הבאים! אפשר לענות להודעה זו כדי לדבר איתנו.',
    header: { format: 'TEXT', text: 'Welcome' },
  }),
  t({
    name: 'opening_hours_2023',
    display_name: 'Opening hours (old)',
    body: 'Our opening hours: Sun-Thu 08:00-18:00.',
    // Approved once, but its active version was withdrawn: listed, not sendable.
    has_active_version: false,
  }),
  t({
    name: 'appointment_reminder',
    display_name: 'Appointment reminder',
    parameter_count: 2,
    body: 'Hello {{1}}, this is a reminder of your appointment on {{2}}.',
    footer: { text: 'Reply to this message to reschedule' },
    buttons: [
      { type: 'QUICK_REPLY', text: 'Confirm' },
      { type: 'QUICK_REPLY', text: 'Reschedule' },
    ],
  }),
  t({
    name: 'clinic_hours',
    display_name: 'Opening hours',
    body: 'We are open Sunday to Thursday, 8:00 to 18:00.',
    header: { format: 'TEXT', text: 'Opening hours' },
  }),
  t({
    name: 'payment_receipt',
    display_name: 'Payment receipt',
    parameter_count: 1,
    body: 'Thank you. We received your payment of {{1}}.',
  }),
  t({
    name: 'appointment_confirmation_linked',
    display_name: 'Appointment confirmation (from the calendar)',
    model_type: 'appointment',
    parameter_count: 3,
    body: 'Your appointment with {{1}} on {{2}} at {{3}} is confirmed.',
  }),
  t({
    name: 'spring_promotion',
    display_name: 'Spring promotion',
    category: 'MARKETING',
    status: 'REJECTED',
    rejection_reason: 'Promotional content is not allowed in this category.',
    body: 'Book a cleaning this spring and get 20% off!',
  }),
  t({
    name: 'vaccination_due',
    display_name: 'Vaccination due',
    status: 'PENDING',
    parameter_count: 1,
    body: '{{1}} is due for a vaccination.',
  }),
  {
    ...t({
      name: 'clinic_image',
      display_name: 'Image from the clinic',
      header: { format: 'IMAGE' },
      body: 'The clinic sent you an image.',
    }),
    role: 'image',
  },
  {
    ...t({
      name: 'clinic_document',
      display_name: 'Document from the clinic',
      header: { format: 'DOCUMENT' },
      body: 'The clinic sent you a document.',
    }),
    role: 'document',
  },
  {
    ...t({
      name: 'clinic_message',
      display_name: 'Message from the clinic',
      category: 'MARKETING',
      parameter_count: 1,
      body: '{{1}}',
      footer: { text: 'Reply to chat with the clinic' },
    }),
    role: 'fallback',
  },
];
