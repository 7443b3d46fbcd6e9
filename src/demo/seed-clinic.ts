import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppointmentType, Breed, Provider, Species, TreatmentMenuItem } from '../entities/catalog.ts';
import type { Clinic } from '../entities/clinic.ts';
import { Appointment, Treatment } from '../entities/clinical.ts';
import { type Contact, Owner, Patient } from '../entities/patient.ts';
import type { Address } from '../entities/tenant.ts';
import { foldedNames } from '../services/patients/search-columns.ts';
import { type SeededCatalog, seedCatalog } from './catalog.ts';
import { birthDate, emailFor, type Gender, israeliId, microchip, person, petNames } from './people.ts';
import type { Rng } from './random.ts';
import { DemoPayments } from './seed-payments.ts';

const DAY = 86_400_000;

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

/** One clinic's data. A class only to share the clinic, PRNG, catalog and receipt counter. */
export class ClinicSeeder {
  private readonly em: EntityManager;
  private readonly clinic: Clinic;
  private readonly rng: Rng;
  private readonly today: Date;
  private readonly vet: boolean;
  private catalog!: SeededCatalog;
  private payments!: DemoPayments;

  constructor(em: EntityManager, clinic: Clinic, rng: Rng, today: Date) {
    this.em = em;
    this.clinic = clinic;
    this.rng = rng;
    this.today = today;
    this.vet = clinic.kind === 'veterinary';
  }

  createRefunds(): void {
    this.payments.createRefunds();
  }

  run(count: number): void {
    this.catalog = seedCatalog(this.em, this.clinic);
    this.payments = new DemoPayments(this.em, this.clinic, this.rng, this.today, this.catalog);
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
    if (past) this.payments.payFor(patient, total, endAt, pay);
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
}
