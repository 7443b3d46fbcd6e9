import type { paymentMethods } from '../../entities/index.ts';
import { defineEnum } from '../../lib/enums.ts';
import { prefixes, tryParseId } from '../../lib/ids.ts';
import { amount2, date, text, z } from '../write-input.ts';

/**
 * The rules of a payment's input (its definition's `write`, ./payment.resource.ts): money,
 * currency, the billing account and how it was paid, with the card, check and bank details kept
 * for the clinic's records (never returned, ./card-data.ts refuses full card numbers).
 */
type PaymentMethod = (typeof paymentMethods)[number];

/** The column's CHECK set (entities), each value described: the compiler holds the two equal. */
export const PaymentMethodType = defineEnum<PaymentMethod>('PaymentMethodType', 'How a payment was made.', {
  cash: 'Cash.',
  card: 'A payment card.',
  check: 'A check.',
  bank_transfer: 'A bank transfer.',
  other: 'Any other method.',
});

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** An ISO 4217 code the runtime knows. */
export const currencyCode = z
  .string()
  .refine((v) => /^[A-Z]{3}$/.test(v) && CURRENCIES.has(v), 'must be an ISO 4217 code, e.g. ILS');

/** Money as numeric(12, 2) holds it: positive, at most two decimals. */
export const money = (description: string) => amount2('positive').meta({ description });

/**
 * idOf's twin whose message does not repeat the value: a payment body is the one place a caller
 * may paste a card number into any field.
 */
export const accountId = z
  .string()
  .meta({ description: `A BillingAccount id (${prefixes.BillingAccount}_…).` })
  .transform((v, ctx) => {
    const n = tryParseId('BillingAccount', v);
    if (n == null) {
      ctx.addIssue({ code: 'custom', message: `is not a ${prefixes.BillingAccount}_… id` });
      return z.NEVER;
    }
    return n;
  });

const last4 = z.string().regex(/^\d{4}$/, 'must be exactly 4 digits');

/** Strict like every body: `number`, `pan`, `cvv`, `cvc`, `cvv2`, `security_code` are unknown fields (422). */
const card = z
  .strictObject({
    brand: text(40).optional().meta({ description: 'The card brand as the terminal shows it, e.g. visa.' }),
    last4: last4.optional().meta({ description: "The card number's last 4 digits (never more)." }),
    exp_month: z.number().int().min(1).max(12).optional().meta({ description: 'Expiry month, 1 to 12.' }),
    exp_year: z
      .number()
      .int()
      .min(2000)
      .max(2100)
      .optional()
      .meta({ description: 'Expiry year, e.g. 2029.' }),
    holder: text(200).optional().meta({ description: "The cardholder's name." }),
  })
  .meta({ description: 'Card details (type card). Never a full card number or security code.' });

const check = z
  .strictObject({
    number: text(40).optional().meta({ description: "The check's number." }),
    bank: text(100).optional().meta({ description: 'The bank it is drawn on.' }),
    date: date.optional().meta({ description: 'The date written on it (YYYY-MM-DD).' }),
  })
  .meta({ description: 'Check details (type check).' });

const bank = z
  .strictObject({
    bank: text(100).optional().meta({ description: "The payer's bank." }),
    branch: text(40).optional().meta({ description: "The bank's branch." }),
    account_last4: last4.optional().meta({ description: "The payer's account number's last 4 digits." }),
  })
  .meta({ description: 'Bank transfer details (type bank_transfer).' });

/** Which method type each detail object belongs to. */
const DETAIL_TYPES = { card: 'card', check: 'check', bank: 'bank_transfer' } as const;

export const method = z
  .strictObject({
    type: z.enum(PaymentMethodType.values).meta({
      description: 'The kind of payment; a card, a check or a bank transfer may give its details beside it.',
    }),
    card: card.optional(),
    check: check.optional(),
    bank: bank.optional(),
  })
  .superRefine((m, ctx) => {
    for (const [key, type] of Object.entries(DETAIL_TYPES))
      if (m[key as keyof typeof DETAIL_TYPES] !== undefined && m.type !== type)
        ctx.addIssue({ code: 'custom', path: [key], message: `goes with method type ${type} only` });
  })
  .meta({ description: 'How it was paid; card, check and bank details are stored, never returned.' });
