import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clinic } from '../entities/clinic.ts';
import { Payment, paymentMethods } from '../entities/clinical.ts';
import type { Patient } from '../entities/patient.ts';
import type { SeededCatalog } from './catalog.ts';
import type { Rng } from './random.ts';

const DAY = 86_400_000;

const cardBrands = ['Visa', 'Mastercard', 'Isracard', 'American Express'] as const;

/**
 * One demo clinic's payments (src/demo/seed-clinic.ts asks for them per visit): receipts from one
 * counter, and the refunds of duplicate charges, created once the payments they refund are stored.
 */
export class DemoPayments {
  private receipt = 10_000;
  private readonly refunds: (() => void)[] = [];
  private readonly em: EntityManager;
  private readonly clinic: Clinic;
  private readonly rng: Rng;
  private readonly today: Date;
  private readonly catalog: SeededCatalog;

  constructor(em: EntityManager, clinic: Clinic, rng: Rng, today: Date, catalog: SeededCatalog) {
    this.em = em;
    this.clinic = clinic;
    this.rng = rng;
    this.today = today;
    this.catalog = catalog;
  }

  createRefunds(): void {
    for (const create of this.refunds) create();
  }

  /** Most visits are paid in full on the day; some partly or not at all; a few were charged twice and refunded. */
  payFor(patient: Patient, total: number, at: Date, pay: (net: number) => void): void {
    const { rng, catalog } = this;
    if (total <= 0 || rng.chance(0.03)) return;
    const amount = rng.chance(0.05) ? Math.round(total * 0.5) : total;
    const methodType = rng.chance(0.6) ? 'card' : rng.pick(paymentMethods.slice(0, 4));
    const first = {
      amount,
      paidAt: at,
      methodType,
      methodDetails: this.methodDetails(methodType, amount),
      billingAccount:
        catalog.billingAccounts.length > 1 && rng.chance(0.3)
          ? catalog.billingAccounts[1]
          : catalog.billingAccounts[0],
    };
    this.payment(patient, first);
    pay(amount);
    if (rng.chance(0.06)) {
      // The duplicate and its refund cancel out, so the balance stays what was charged minus paid.
      const dup = this.payment(patient, { ...first, paidAt: new Date(at.getTime() + 60_000) });
      const refundAt = new Date(Math.min(this.today.getTime(), at.getTime() + rng.int(1, 10) * DAY));
      this.refunds.push(() => this.payment(patient, { ...first, paidAt: refundAt, refundOf: dup }));
    }
  }

  private payment(
    patient: Patient,
    p: Pick<Payment, 'amount' | 'paidAt' | 'methodType' | 'billingAccount'> & {
      methodDetails: Record<string, unknown> | null;
      refundOf?: Payment;
    },
  ): Payment {
    this.receipt++;
    return this.em.create(Payment, {
      clinic: this.clinic,
      patient,
      amount: p.amount,
      currency: 'ILS',
      methodType: p.methodType,
      // A refund goes back to the card (or account) that paid, through the same business.
      methodDetails: p.methodDetails,
      billingAccount: p.billingAccount,
      isRefund: !!p.refundOf,
      refundOf: p.refundOf ?? null,
      // Refunds get a credit-note number, payments a receipt number, from one counter.
      receiptNumber: `${p.refundOf ? 'CN' : 'RC'}-${this.receipt}`,
      paidAt: p.paidAt,
      note: p.refundOf ? 'Duplicate charge refunded' : null,
      cancelledAt: null,
      createdAt: p.paidAt,
      updatedAt: p.paidAt,
    });
  }

  /** Fake but plausibly shaped card, check and bank details: stored, never returned by the API. */
  private methodDetails(method: Payment['methodType'], amount: number): Record<string, unknown> | null {
    const { rng } = this;
    switch (method) {
      case 'card':
        return {
          brand: rng.pick(cardBrands),
          last4: rng.digits(4),
          exp_month: rng.int(1, 12),
          exp_year: this.today.getUTCFullYear() + rng.int(0, 4),
          installments: amount >= 2000 ? rng.pick([1, 3, 6]) : 1,
          approval_code: rng.digits(7),
        };
      case 'check':
        return {
          bank_code: rng.pick(['10', '11', '12', '20', '31']),
          branch: rng.digits(3),
          account_last4: rng.digits(4),
          check_number: rng.digits(6),
        };
      case 'bank_transfer':
        return {
          bank_code: rng.pick(['10', '12', '20']),
          branch: rng.digits(3),
          account_last4: rng.digits(4),
          reference: `TRF${rng.digits(8)}`,
        };
      default:
        return null;
    }
  }
}
