import type { EntityManager } from '@mikro-orm/postgresql';
import { createApiKey } from '../auth/keys.ts';
import { readScopes, writeScopes } from '../auth/scopes.ts';
import type { AppointmentType, Breed, Provider, Species, TreatmentMenuItem } from '../entities/catalog.ts';
import type { Clinic } from '../entities/clinic.ts';
import { Appointment, Payment, paymentMethods, Treatment } from '../entities/clinical.ts';
import { type Contact, Owner, Patient } from '../entities/patient.ts';
import type { Address } from '../entities/tenant.ts';
import { toId } from '../lib/ids.ts';
import { createClinic } from '../services/clinics/clinics.ts';
import { foldedNames } from '../services/patients/search-columns.ts';
import { type SeededCatalog, seedCatalog } from './catalog.ts';
import { birthDate, emailFor, type Gender, israeliId, microchip, person, petNames } from './people.ts';
import { Rng, seedOf } from './random.ts';
import { seedCalls } from './seed-calls.ts';
import { seedChat } from './seed-chat.ts';
import { seedWorkingHours } from './seed-working-hours.ts';

export interface DemoKey {
  id: string;
  key: string;
  clinic_id: string;
}

/** The keys the demo seed makes (and the start banner and `cli seed` print), by role. */
export const DEMO_KEY_ROLES = ['readAll', 'chatWrite', 'vetReadAll', 'clinicWrite'] as const;

/** The demo clinics' time zone (both are in Israel). */
export const DEMO_TIMEZONE = 'Asia/Jerusalem';

export interface DemoResult {
  clinics: { id: string; name: string; kind: string }[];
  keys: Record<(typeof DEMO_KEY_ROLES)[number], DemoKey>;
}

const DAY = 86_400_000;

/**
 * Seeds a dental and a veterinary clinic with a full, realistic data set and three API keys, in
 * one transaction (a half-seeded demo is worse than none). Everything except the keys comes from
 * a seeded PRNG and every date is an offset from the start of `now`'s day (UTC), so two runs on
 * the same day write the same rows; the price is that an appointment later today counts as
 * upcoming. No events are written: this is a data load, not activity to announce.
 */
export async function seedDemo(
  em: EntityManager,
  opts: { patientsPerClinic?: number; now?: Date } = {},
): Promise<DemoResult> {
  const perClinic = opts.patientsPerClinic ?? 40;
  const now = opts.now ?? new Date();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

  return em.transactional(async (tx) => {
    const dental = await createClinic(tx, {
      name: 'Smile Dental',
      kind: 'dental',
      // The demo's clinics are test clinics (docs/test-mode.md): cg_test_ keys, the sandbox network.
      mode: 'test',
      country: 'IL',
      phone: '052-555-0142',
      handledMarkingEnabled: true,
      timezone: DEMO_TIMEZONE,
    });
    const vet = await createClinic(tx, {
      name: 'Happy Paws Veterinary',
      kind: 'veterinary',
      mode: 'test',
      country: 'IL',
      phone: '04-855-0177',
      timezone: DEMO_TIMEZONE,
    });

    for (const clinic of [dental, vet]) {
      const seeder = new ClinicSeeder(tx, clinic, new Rng(seedOf(clinic.kind === 'dental' ? 1 : 2)), today);
      seeder.run(perClinic);
      await tx.flush();
      // Refunds point at payments of the same table: created after those are stored, so MikroORM
      // inserts them as they are instead of patching refund_of (and updated_at) afterwards.
      seeder.createRefunds();
      await tx.flush();
      await seedChat(tx, clinic, new Rng(seedOf(clinic.kind === 'dental' ? 3 : 4)), now);
      await seedCalls(tx, clinic, new Rng(seedOf(clinic.kind === 'dental' ? 5 : 6)), now);
      await seedWorkingHours(tx, clinic);
    }

    const key = async (clinic: Clinic, name: string, scopes: string[]): Promise<DemoKey> => {
      const k = await createApiKey(tx, { clinicId: clinic.id, name, scopes });
      return { id: k.id, key: k.key, clinic_id: k.clinic_id };
    };
    return {
      clinics: [dental, vet].map((c) => ({ id: toId('Clinic', c.id), name: c.name, kind: c.kind })),
      keys: {
        // chat:write can never sit beside chat:read, so "everything" is split over two keys.
        readAll: await key(dental, 'Demo: read everything', [...readScopes, 'webhooks:manage']),
        chatWrite: await key(dental, 'Demo: send chat messages', ['chat:write']),
        vetReadAll: await key(vet, 'Demo: read everything', [...readScopes]),
        clinicWrite: await key(dental, 'Demo: clinic writes and events', [
          ...readScopes,
          ...writeScopes,
          'webhooks:manage',
        ]),
      },
    };
  });
}

// FDI tooth numbers: quadrant 1-4, tooth 1-8.
const tooth = (rng: Rng) => `${rng.int(1, 4)}${rng.int(1, 8)}`;

/** Which procedures each appointment type usually ends in, by menu code. */
const codesByType: Record<string, { codes: string[]; teeth: number }> = {
  'Check-up': { codes: ['D0120', 'D0274', 'D0150'], teeth: 0 },
  Cleaning: { codes: ['D1110', 'D1206', 'D4341'], teeth: 0 },
  Filling: { codes: ['D2391', 'D2392', 'D2150'], teeth: 2 },
  'Root canal': { codes: ['D3310', 'D3330'], teeth: 1 },
  'Crown fitting': { codes: ['D2740'], teeth: 1 },
  Extraction: { codes: ['D7140', 'D7210'], teeth: 1 },
  Emergency: { codes: ['D0150', 'D7140', 'D2391'], teeth: 1 },
  Consultation: { codes: ['VET-001'], teeth: 0 },
  Vaccination: { codes: ['VET-010'], teeth: 0 },
  Surgery: { codes: ['VET-030', 'VET-031'], teeth: 0 },
  'Dental cleaning': { codes: ['VET-032'], teeth: 0 },
  'Follow-up': { codes: ['VET-002'], teeth: 0 },
  Grooming: { codes: ['VET-040'], teeth: 0 },
};

interface PatientData {
  firstName: string;
  lastName: string | null;
  gender: Gender;
  phone: string | null;
  email: string | null;
  birthDate: string;
  address: Address | null;
  contacts: Contact[];
  idNumber: string | null;
  owner?: Owner;
  species?: Species;
  breed?: Breed | null;
}

const cardBrands = ['Visa', 'Mastercard', 'Isracard', 'American Express'] as const;

/** One clinic's data. A class only to share the clinic, PRNG, catalog and receipt counter. */
class ClinicSeeder {
  private readonly em: EntityManager;
  private readonly clinic: Clinic;
  private readonly rng: Rng;
  private readonly today: Date;
  private readonly vet: boolean;
  private catalog!: SeededCatalog;
  private receipt = 10_000;
  private readonly refunds: (() => void)[] = [];

  constructor(em: EntityManager, clinic: Clinic, rng: Rng, today: Date) {
    this.em = em;
    this.clinic = clinic;
    this.rng = rng;
    this.today = today;
    this.vet = clinic.kind === 'veterinary';
  }

  createRefunds(): void {
    for (const create of this.refunds) create();
  }

  run(count: number): void {
    this.catalog = seedCatalog(this.em, this.clinic);
    if (this.vet) this.animals(count);
    else this.people(count);
  }

  private people(count: number): void {
    const { rng } = this;
    // The first few are fixed so accent-insensitive search always has these to find.
    const showcase: [string, string, Gender][] = [
      ['Éva', 'Szabó', 'female'],
      ['Zoë', 'Cohen', 'female'],
      ['José', 'Pérez', 'male'],
      ['Noémie', 'Lefèvre', 'female'],
    ];
    let prev: Patient | null = null;
    for (let i = 0; i < count; i++) {
      const p = person(rng);
      if (showcase[i]) [p.firstName, p.lastName, p.gender] = showcase[i];
      // Families share a phone and address: phone lookup must then return several patients.
      const child = prev?.phone && i >= showcase.length && rng.chance(0.15);
      if (child && prev) {
        Object.assign(p, { lastName: prev.lastName, phone: prev.phone, address: prev.address });
      }
      const email = child || rng.chance(0.1) ? null : emailFor(rng, p.firstName, p.lastName);
      const contacts: Contact[] = [];
      if (p.phone) contacts.push({ type: 'phone', value: p.phone, label: child ? 'parent' : 'mobile' });
      if (rng.chance(0.3)) contacts.push({ type: 'phone', value: `+9723${rng.digits(7)}`, label: 'home' });
      if (email) contacts.push({ type: 'email', value: email, label: 'personal' });
      // One patient without a phone: their chat messages are an empty page, not an error.
      const phone = i === 7 ? null : p.phone;
      const patient = this.patient({
        firstName: p.firstName,
        lastName: p.lastName,
        gender: p.gender,
        phone,
        email,
        birthDate: child ? birthDate(rng, this.today, 4, 16) : birthDate(rng, this.today, 18, 85),
        address: p.address,
        contacts,
        idNumber: israeliId(rng),
      });
      if (!child) prev = patient;
    }
  }

  private animals(count: number): void {
    const { rng } = this;
    const { species, breeds } = this.catalog;
    let owner: Owner | null = null;
    let left = 0;
    const named = new Set<string>();
    for (let i = 0; i < count; i++) {
      if (left === 0) {
        named.clear();
        const p = person(rng);
        left = rng.pick([1, 1, 1, 2, 2, 3]);
        owner = this.em.create(Owner, {
          clinic: this.clinic,
          firstName: p.firstName,
          lastName: p.lastName,
          phone: p.phone,
          email: rng.chance(0.85) ? p.email : null,
          address: p.address,
          createdAt: new Date(this.today.getTime() - rng.int(200, 1500) * DAY),
          updatedAt: new Date(this.today.getTime() - rng.int(0, 199) * DAY),
        });
      }
      left--;
      const o = owner as Owner;
      const kind = rng.next();
      const s = kind < 0.5 ? species[0] : kind < 0.85 ? species[1] : kind < 0.93 ? species[2] : species[3];
      const gender: Gender = rng.chance(0.5) ? 'female' : 'male';
      // Two animals of one household are not both called Daisy.
      let name = rng.pick(petNames[gender]);
      while (named.has(name)) name = rng.pick(petNames[gender]);
      named.add(name);
      const ofSpecies = breeds.filter((b) => b.species === s);
      // Dogs and cats are chipped (dogs by law); a chip number is what vets use as an id.
      const chipped = s === species[0] || (s === species[1] && rng.chance(0.6));
      const animal = this.patient({
        firstName: name,
        lastName: o.lastName ?? null,
        gender,
        // The animal carries its owner's phone and email, so phone lookup works as at a dental clinic.
        phone: o.phone ?? null,
        email: o.email ?? null,
        birthDate: birthDate(rng, this.today, 0.3, s === species[3] ? 20 : 15),
        address: o.address ?? null,
        contacts: o.phone ? [{ type: 'phone', value: o.phone, label: 'owner' }] : [],
        idNumber: chipped ? microchip(rng) : null,
        owner: o,
        species: s,
        breed: rng.chance(0.9) ? rng.pick(ofSpecies) : null,
      });
      // An owner is on file no later than their first animal.
      if (animal.createdAt < o.createdAt) o.createdAt = animal.createdAt;
    }
  }

  /** A patient (or animal) with their appointments, treatments, payments and the balance they leave. */
  private patient(data: PatientData): Patient {
    const { rng, em, clinic, catalog } = this;
    // Days relative to today: a history of past visits, and for most patients a next one booked.
    const visits = Array.from({ length: rng.int(1, 5) }, () => rng.int(-540, -1));
    if (rng.chance(0.6)) visits.push(rng.int(0, 60));
    visits.sort((a, b) => a - b);
    const createdAt = new Date(
      Math.min(this.today.getTime(), this.today.getTime() + (visits[0] - rng.int(1, 60)) * DAY),
    );
    const statuses = catalog.patientStatuses;
    const patient = em.create(Patient, {
      clinic,
      ...data,
      emailLower: data.email?.toLowerCase() ?? null,
      ...foldedNames(data.firstName, data.lastName),
      status: visits[0] > -30 ? statuses[1] : rng.chance(0.1) ? statuses[2] : statuses[0],
      balance: 0,
      createdAt,
      updatedAt: createdAt,
    });

    let charged = 0;
    let paid = 0;
    for (const day of visits) charged += this.visit(patient, day, createdAt, (amount) => (paid += amount));
    // Positive balance = what the patient still owes.
    patient.balance = Math.round((charged - paid) * 100) / 100;
    // A clinic flags patients who owe money; the demo does the same so the status means something.
    if (!this.vet && patient.balance > 0) patient.status = statuses[4];
    if (rng.chance(0.2)) this.plannedTreatment(patient);
    return patient;
  }

  /** A treatment plan entry not booked yet: planned, with no appointment. */
  private plannedTreatment(patient: Patient): void {
    const { rng, catalog } = this;
    const codes = this.vet ? ['VET-032', 'VET-020', 'VET-022'] : ['D2740', 'D6010', 'D9972', 'D4341'];
    const item = catalog.menu.find((m) => m.code === rng.pick(codes));
    if (!item) return;
    const createdAt = new Date(this.today.getTime() - rng.int(1, 30) * DAY);
    this.em.create(Treatment, {
      clinic: this.clinic,
      patient,
      appointment: null,
      menuItem: item,
      provider: rng.pick(catalog.providers),
      description: item.name,
      teeth: this.vet || item.code === 'D9972' ? null : [tooth(rng)],
      price: item.price,
      status: 'planned',
      performedAt: new Date(this.today.getTime() + rng.int(14, 120) * DAY),
      note: 'Treatment plan',
      cancelledAt: null,
      createdAt,
      updatedAt: createdAt,
    });
  }

  /** One appointment; returns what was charged for it and reports what was paid through `pay`. */
  private visit(patient: Patient, day: number, notBefore: Date, pay: (net: number) => void): number {
    const { rng, em, clinic, catalog } = this;
    const st = catalog.appointmentStatuses;
    const type = rng.pick(catalog.appointmentTypes);
    const provider = this.providerFor(type);
    const branch = rng.chance(0.75) ? catalog.branches[0] : catalog.branches[1];
    // Opening hours 08:00-18:00 Israel time, written with a fixed +02:00 offset (close enough for a demo).
    const startAt = new Date(
      this.today.getTime() + day * DAY + (rng.int(6, 15) * 60 + rng.pick([0, 15, 30, 45])) * 60_000,
    );
    const endAt = new Date(startAt.getTime() + type.durationMinutes * 60_000);
    const past = endAt < this.today;
    const booked = new Date(
      Math.max(notBefore.getTime(), Math.min(this.today.getTime(), startAt.getTime() - rng.int(1, 30) * DAY)),
    );
    const cancelled = rng.chance(past ? 0.1 : 0.08);
    const status = cancelled
      ? st.Cancelled
      : past
        ? rng.chance(0.05)
          ? st['No-show']
          : st.Completed
        : day <= 3
          ? st.Confirmed
          : rng.chance(0.05)
            ? st['Pending confirmation']
            : st.Scheduled;
    const cancelledAt = cancelled
      ? new Date(
          Math.min(this.today.getTime(), Math.max(booked.getTime(), startAt.getTime() - rng.int(1, 5) * DAY)),
        )
      : null;
    const appointment = em.create(Appointment, {
      clinic,
      patient,
      branch,
      provider,
      type,
      status,
      startAt,
      endAt,
      note: rng.chance(0.15)
        ? rng.pick(['Prefers morning slots', 'Sensitive to cold', 'Bring previous X-rays', 'Anxious patient'])
        : null,
      cancelledAt,
      createdAt: booked,
      updatedAt: cancelledAt ?? booked,
    });
    if (cancelled || status === st['No-show']) return 0;

    const plan = codesByType[type.name] ?? { codes: [], teeth: 0 };
    const items = plan.codes
      .map((c) => catalog.menu.find((m) => m.code === c))
      .filter((m): m is TreatmentMenuItem => !!m);
    if (!items.length) return 0;
    let total = 0;
    const picked = new Set(Array.from({ length: rng.chance(0.3) ? 2 : 1 }, () => rng.pick(items)));
    for (const item of picked) {
      const teeth =
        this.vet || !plan.teeth
          ? null
          : [...new Set(Array.from({ length: rng.int(1, plan.teeth) }, () => tooth(rng)))];
      const price = (item.price ?? 0) * (teeth?.length ?? 1);
      em.create(Treatment, {
        clinic,
        patient,
        appointment,
        menuItem: item,
        provider,
        description: this.vet && type.name === 'Vaccination' ? this.vaccination(patient) : item.name,
        teeth,
        price,
        status: past ? 'completed' : 'planned',
        performedAt: startAt,
        note: null,
        cancelledAt: null,
        createdAt: booked,
        updatedAt: past ? endAt : booked,
      });
      if (past) total += price;
    }
    if (past) this.payFor(patient, total, endAt, pay);
    return total;
  }

  private vaccination(patient: Patient): string {
    const options = this.catalog.vaccines.filter((v) => v.species === patient.species);
    const v = options.length ? this.rng.pick(options) : null;
    if (!v) return 'Vaccination';
    return v.batchRequired
      ? `${v.name}, batch ${this.rng.pick(['A', 'B', 'K'])}${this.rng.digits(5)}`
      : v.name;
  }

  private providerFor(type: AppointmentType): Provider {
    const { providers } = this.catalog;
    const assistant = ['hygienist', 'veterinary technician'];
    const wantsAssistant = type.name === 'Cleaning' || type.name === 'Grooming';
    const fit = providers.filter((p) => assistant.includes(p.type) === wantsAssistant);
    return this.rng.pick(fit.length ? fit : providers);
  }

  /** Most visits are paid in full on the day; some partly or not at all; a few were charged twice and refunded. */
  private payFor(patient: Patient, total: number, at: Date, pay: (net: number) => void): void {
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
