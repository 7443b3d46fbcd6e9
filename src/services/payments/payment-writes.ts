import { BillingAccount, Clinic, Patient, Payment as PaymentEntity } from '../../entities/index.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { prefixes, tryParseId } from '../../lib/ids.ts';
import { clinicRef } from '../clinic-ref.ts';
import { restGroups } from '../resource.ts';
import { amount2, date, instant, text, z } from '../write-input.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { refuseCardNumbers } from './card-data.ts';
import { Payment, PaymentMethodType } from './payment.resource.ts';

/**
 * Payments: record one for a patient, refund it (a new row with is_refund), cancel it (issue 16).
 * Card, check and bank details are kept in `methodDetails` for the clinic's own records and are
 * never returned, in an answer, an event or an error message; full card numbers and security
 * codes are refused outright (./card-data.ts).
 */
const NOTE_MAX = 4000;

/**
 * The clinic's currency when a payment names none. Clinics have no currency column: it follows
 * the country (euro-area countries pay in EUR); an unlisted country defaults to USD.
 */
const EURO_AREA = 'AT BE HR CY EE FI FR DE GR IE IT LV LT LU MT NL PT SK SI ES'.split(' ');
const CURRENCY_OF_COUNTRY: Record<string, string> = {
  IL: 'ILS',
  US: 'USD',
  GB: 'GBP',
  ...Object.fromEntries(EURO_AREA.map((c) => [c, 'EUR'])),
};
export const currencyOfCountry = (country: string) => CURRENCY_OF_COUNTRY[country.toUpperCase()] ?? 'USD';

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/** Money as numeric(12, 2) holds it: positive, at most two decimals. */
const money = (description: string) => amount2('positive').meta({ description });

const cents = (v: number) => Math.round(v * 100);

/**
 * idOf's twin whose message does not repeat the value: a payment body is the one place a caller
 * may paste a card number into any field.
 */
const accountId = z
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

const method = z
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

/** Hand-written: derived, billing_account_id would move first (the definition's order), method (no column) last. */
export const recordPaymentInput = z
  .strictObject({
    amount: money('Positive, at most two decimals.'),
    currency: z
      .string()
      .refine((v) => /^[A-Z]{3}$/.test(v) && CURRENCIES.has(v), 'must be an ISO 4217 code, e.g. ILS')
      .optional()
      .meta({ description: "ISO 4217; defaults to the clinic's (from its country)." }),
    method,
    billing_account_id: accountId
      .optional()
      .meta({ description: 'Required unless the clinic has exactly one billing account.' }),
    paid_at: instant.optional().meta({ description: 'Defaults to now.' }),
    note: text(NOTE_MAX).nullable().optional().meta({ description: "Staff's note, up to 4000 characters." }),
  })
  .superRefine((body, ctx) => {
    refuseCardNumbers(body, ctx);
  });

/** Hand-written: a refund's amount and note; everything else is the original payment's. */
export const refundPaymentInput = z
  .strictObject({
    amount: money('Defaults to what is left to refund.').optional(),
    note: text(NOTE_MAX)
      .nullable()
      .optional()
      .meta({ description: 'Why, or anything else staff want to keep with the refund.' }),
  })
  .superRefine((body, ctx) => {
    refuseCardNumbers(body, ctx);
  });

/** Hand-written: a cancel takes no fields. */
export const cancelPaymentInput = z.strictObject({});

async function accountOf(w: WriteContext, id: number | undefined): Promise<BillingAccount> {
  if (id !== undefined) return w.ref(BillingAccount, id, 'billing_account_id');
  // The accounts the clinic still offers: a disabled one is not a choice (docs/decisions.md).
  const accounts = await w.em.find(BillingAccount, { disabledAt: null }, { limit: 2 });
  if (accounts.length !== 1)
    throw invalid(
      'billing_account_id',
      'billing_account_id is required: the clinic has more than one billing account in use (or none).',
    );
  return accounts[0];
}

export const recordPayment = defineWrite({
  name: 'recordPayment',
  method: 'POST',
  path: '/patients/:id/payments',
  ids: { id: 'Patient' },
  status: 201,
  tag: 'Payments',
  summary: 'Record a payment of a patient',
  description:
    "currency defaults to the clinic's, paid_at to now, billing_account_id to the clinic's only account. A full card number or security code anywhere is a 422. Records payment.recorded.",
  scopes: ['payments:write'],
  input: recordPaymentInput,
  example: {
    amount: 250,
    currency: 'ILS',
    method: { type: 'card', card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2028 } },
    note: 'Cleaning',
  },
  resource: Payment,
  event: 'payment.recorded',
  // The patient is the parent the payment is added to, not what changes.
  ifMatch: false,
  async run(w, input, id) {
    const patient = await w.load(Patient, 'Patient', id);
    const billingAccount = await accountOf(w, input.billing_account_id);
    const currency =
      input.currency ?? currencyOfCountry((await w.em.findOneOrFail(Clinic, { id: w.clinicId })).country);
    const { type, ...details } = input.method;
    const p = w.em.create(PaymentEntity, {
      clinic: clinicRef(w),
      patient,
      billingAccount,
      amount: input.amount,
      currency,
      methodType: type,
      methodDetails: Object.keys(details).length ? details : null,
      isRefund: false,
      refundOf: null,
      receiptNumber: null,
      paidAt: input.paid_at ?? w.now,
      note: input.note ?? null,
      cancelledAt: null,
    });
    await w.em.flush();
    return p.id;
  },
});

/** The payment the path names, locked (so refunds of it take turns), and refundable. */
async function refundable(w: WriteContext, id: string | undefined): Promise<PaymentEntity> {
  const p = await w.load(PaymentEntity, 'Payment', id);
  if (p.isRefund)
    throw new AppError('validation_failed', 'A refund cannot be refunded; cancel it instead.', {
      param: 'id',
    });
  if (p.cancelledAt) throw new AppError('conflict', 'The payment is cancelled; there is nothing to refund.');
  return p;
}

/** What active (not cancelled) refunds of the payment gave back, in cents. */
async function refundedCents(w: WriteContext, p: PaymentEntity): Promise<number> {
  const refunds = await w.em.find(PaymentEntity, { refundOf: p, cancelledAt: null }, { fields: ['amount'] });
  return refunds.reduce((sum, r) => sum + cents(r.amount), 0);
}

export const refundPayment = defineWrite({
  name: 'refundPayment',
  method: 'POST',
  path: '/payments/:id/refund',
  ids: { id: 'Payment' },
  status: 201,
  tag: 'Payments',
  summary: 'Refund a payment',
  description:
    "A new payment row with is_refund and refund_of_id, answered (201); amount defaults to what is left to refund, and refunds never exceed the payment (422). Records payment.recorded for the refund and payment.cancelled with the original payment's data.",
  scopes: ['payments:write'],
  input: refundPaymentInput,
  example: { amount: 50, note: 'Partial refund' },
  resource: Payment,
  event: 'payment.recorded',
  // The path's payment is not changed (the refund is a new row); its lock orders racing refunds.
  ifMatch: false,
  errors: {
    '409': {
      code: 'conflict',
      description:
        '`conflict`: the payment is cancelled or refunded in full already, or the Idempotency-Key was used with another body.',
      message: 'The payment is refunded in full already.',
    },
  },
  async run(w, input, id) {
    const original = await refundable(w, id);
    const left = cents(original.amount) - (await refundedCents(w, original));
    if (left <= 0) throw new AppError('conflict', 'The payment is refunded in full already.');
    const amount = input.amount === undefined ? left : cents(input.amount);
    if (amount > left)
      throw invalid(
        'amount',
        `amount: at most ${(left / 100).toFixed(2)} is left to refund of this payment.`,
      );
    const refund = w.em.create(PaymentEntity, {
      clinic: clinicRef(w),
      patient: original.patient,
      billingAccount: original.billingAccount,
      amount: amount / 100,
      currency: original.currency,
      methodType: original.methodType,
      // Details stay with the original only: the refund goes back the way it came.
      methodDetails: null,
      isRefund: true,
      refundOf: original,
      receiptNumber: null,
      paidAt: w.now,
      note: input.note ?? null,
      cancelledAt: null,
    });
    await w.em.flush();
    return {
      id: refund.id,
      also: [
        {
          type: 'payment.cancelled',
          resource: Payment,
          id: original.id,
          groups: restGroups(true, []),
        },
      ],
    };
  },
});

export const cancelPayment = defineWrite({
  name: 'cancelPayment',
  method: 'POST',
  path: '/payments/:id/cancel',
  ids: { id: 'Payment' },
  status: 200,
  tag: 'Payments',
  summary: 'Cancel a payment or refund',
  description:
    "Sets cancelled_at; a payment's active refunds are cancelled with it. Cancelling twice is a 409. Records payment.cancelled for it and for each refund cancelled with it.",
  scopes: ['payments:write'],
  input: cancelPaymentInput,
  example: {},
  resource: Payment,
  event: 'payment.cancelled',
  async run(w, _input, id) {
    const p = await w.load(PaymentEntity, 'Payment', id);
    if (p.cancelledAt) throw new AppError('conflict', 'The payment is cancelled already.');
    p.cancelledAt = w.now;
    // A voided payment leaves no refund of it standing: the money never moved either way.
    const refunds = p.isRefund ? [] : await w.em.find(PaymentEntity, { refundOf: p, cancelledAt: null });
    for (const r of refunds) r.cancelledAt = w.now;
    const groups = restGroups(true, []);
    return {
      id: p.id,
      also: refunds.map((r) => ({ type: 'payment.cancelled', resource: Payment, id: r.id, groups })),
    };
  },
});
