import { BillingAccount, Clinic, Patient, Payment as PaymentEntity } from '../../entities/index.ts';
import { AppError, invalid } from '../../lib/errors.ts';
import { clinicRef } from '../clinic-ref.ts';
import { restGroups } from '../resource.ts';
import { text, z } from '../write-input.ts';
import { createInputOf } from '../write-inputs-of.ts';
import { defineWrite, type WriteContext } from '../writes.ts';
import { refuseCardNumbers } from './card-data.ts';
import { NOTE_MAX, Payment } from './payment.resource.ts';
import { money } from './payment-rules.ts';

/**
 * Payments: record one for a patient, refund it (a new row with is_refund), cancel it (issue 16).
 * Card, check and bank details are kept in `methodDetails` for the clinic's own records and are
 * never returned, in an answer, an event or an error message; full card numbers and security
 * codes are refused outright (./card-data.ts).
 */

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

export const recordPaymentInput = createInputOf(Payment).superRefine((body, ctx) => {
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
      ...(w.insertFields(input) as { amount: number }),
      currency,
      methodType: type,
      methodDetails: Object.keys(details).length ? details : null,
      isRefund: false,
      refundOf: null,
      receiptNumber: null,
      paidAt: input.paid_at ?? w.now,
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

const cents = (v: number) => Math.round(v * 100);

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
