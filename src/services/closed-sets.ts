import { defineEnum } from '../lib/enums.ts';

/**
 * The closed sets more than one domain uses (src/lib/enums.ts); a domain's own sets sit beside
 * its resource definition.
 */
export const Direction = defineEnum('Direction', 'Which way a message or a call went.', {
  inbound: 'From the patient (or caller) to the clinic.',
  outbound: 'From the clinic to the patient.',
});

export const ContactType = defineEnum('ContactType', 'The kind of a contact entry.', {
  phone: 'A phone number.',
  email: 'An email address.',
});
