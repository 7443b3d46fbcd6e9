import type { MikroORM } from '@mikro-orm/postgresql';
import {
  Appointment,
  AppointmentStatus,
  AppointmentType,
  BillingAccount,
  Branch,
  Breed,
  Call,
  Clinic,
  Conversation,
  Measurement,
  Message,
  Owner,
  Patient,
  PatientStatus,
  Payment,
  Provider,
  Species,
  Treatment,
  TreatmentCategory,
  TreatmentMenuItem,
  Vaccine,
} from '../src/entities/index.ts';
import { toE164 } from '../src/lib/phone.ts';
import { foldedNames } from '../src/services/patients/search-columns.ts';

/** Small, exact fixtures written straight through the ORM (the API under test only reads them). */
export function fixtures(orm: MikroORM, clinicId: number) {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { clinicId });
  const clinic = em.getReference(Clinic, clinicId);
  const t0 = new Date('2026-01-01T09:00:00Z').getTime();
  let n = 0;
  const at = (minutes: number) => new Date(t0 + minutes * 60_000);

  return {
    em,
    async catalog() {
      const branch = em.create(Branch, {
        clinic,
        name: 'Main branch',
        phone: '+97235550100',
        address: {
          line1: '1 Herzl St',
          line2: null,
          city: 'Tel Aviv',
          postal_code: '6100000',
          country: 'IL',
        },
        color: '#336699',
      });
      const type = em.create(AppointmentType, { clinic, name: 'Check-up', durationMinutes: 30, color: null });
      const status = em.create(AppointmentStatus, {
        clinic,
        name: 'Scheduled',
        color: '#00f',
        enabled: true,
      });
      const category = em.create(TreatmentCategory, { clinic, name: 'Preventive' });
      const menuItem = em.create(TreatmentMenuItem, {
        clinic,
        name: 'Cleaning',
        code: 'D1110',
        price: 250,
        color: null,
        category,
      });
      const provider = em.create(Provider, { clinic, name: 'Dr. Levi', type: 'dentist', color: null });
      const account = em.create(BillingAccount, {
        clinic,
        businessName: 'Clinic Ltd.',
        businessId: '515000000',
      });
      const patientStatus = em.create(PatientStatus, { clinic, name: 'Active', color: '#0f0' });
      const species = em.create(Species, { clinic, name: 'Dog' });
      const cat = em.create(Species, { clinic, name: 'Cat' });
      const breed = em.create(Breed, { clinic, name: 'Beagle', species });
      const catBreed = em.create(Breed, { clinic, name: 'Siamese', species: cat });
      const rabies2 = em.create(Vaccine, {
        clinic,
        name: 'Rabies booster',
        code: 'RB2',
        species,
        intervalMonths: 36,
        price: 120,
        batchRequired: true,
      });
      const rabies = em.create(Vaccine, {
        clinic,
        name: 'Rabies',
        code: 'RB',
        species,
        intervalMonths: 12,
        nextVaccine: rabies2,
        price: 100,
        batchRequired: true,
      });
      const weight = em.create(Measurement, { clinic, name: 'Weight', unit: 'kg', isRequired: true });
      await em.flush();
      return {
        branch,
        type,
        status,
        menuItem,
        provider,
        account,
        patientStatus,
        species,
        cat,
        breed,
        catBreed,
        rabies,
        weight,
      };
    },
    async owner(o: { first: string; last: string; phone?: string }) {
      const owner = em.create(Owner, {
        clinic,
        firstName: o.first,
        lastName: o.last,
        phone: o.phone ? toE164(o.phone, 'IL') : null,
        email: `${o.first.toLowerCase()}@example.com`,
        address: null,
        createdAt: new Date(),
        updatedAt: new Date(),
      });
      await em.flush();
      return owner;
    },
    async patient(p: {
      first: string | null;
      last: string | null;
      phone?: string | null;
      email?: string | null;
      owner?: Owner;
      species?: Species;
      breed?: Breed;
      status?: PatientStatus;
    }) {
      n++;
      const patient = em.create(Patient, {
        clinic,
        firstName: p.first,
        lastName: p.last,
        phone: p.phone ? toE164(p.phone, 'IL') : null,
        email: p.email ?? null,
        emailLower: p.email?.toLowerCase() ?? null,
        gender: 'female',
        birthDate: `1990-05-0${(n % 9) + 1}`,
        status: p.status ?? null,
        ...foldedNames(p.first, p.last),
        address: {
          line1: `${n} Rothschild Blvd`,
          line2: null,
          city: 'Tel Aviv',
          postal_code: '6688101',
          country: 'IL',
        },
        contacts: [{ type: 'phone', value: '+972501111111', label: 'work' }],
        balance: 12.5,
        idNumber: `0000000${n}`,
        owner: p.owner ?? null,
        species: p.species ?? null,
        breed: p.breed ?? null,
        createdAt: at(n),
        updatedAt: at(n),
      });
      await em.flush();
      return patient;
    },
    async appointment(
      patient: Patient,
      c: { branch: Branch; type?: AppointmentType; status?: AppointmentStatus; provider?: Provider },
      minutes: number,
    ) {
      const a = em.create(Appointment, {
        clinic,
        patient,
        branch: c.branch,
        provider: c.provider ?? null,
        type: c.type ?? null,
        status: c.status ?? null,
        startAt: at(minutes),
        endAt: at(minutes + 30),
        note: null,
        cancelledAt: null,
        createdAt: at(0),
        updatedAt: at(0),
      });
      await em.flush();
      return a;
    },
    async treatment(
      patient: Patient,
      c: { menuItem?: TreatmentMenuItem; appointment?: Appointment },
      minutes: number,
    ) {
      const t = em.create(Treatment, {
        clinic,
        patient,
        appointment: c.appointment ?? null,
        menuItem: c.menuItem ?? null,
        provider: null,
        description: 'Scale and polish',
        teeth: ['11', '12'],
        price: 250,
        status: 'completed',
        performedAt: at(minutes),
        note: null,
        cancelledAt: null,
        createdAt: at(0),
        updatedAt: at(0),
      });
      await em.flush();
      return t;
    },
    async payment(patient: Patient, account: BillingAccount, minutes: number, refundOf?: Payment) {
      const p = em.create(Payment, {
        clinic,
        patient,
        billingAccount: account,
        amount: refundOf ? 50 : 250,
        currency: 'ILS',
        methodType: 'card',
        methodDetails: { card_last4: '4242', card_brand: 'visa', holder: 'SECRET HOLDER' },
        isRefund: !!refundOf,
        refundOf: refundOf ?? null,
        receiptNumber: `R-${minutes}`,
        paidAt: at(minutes),
        note: null,
        cancelledAt: null,
        createdAt: at(0),
        updatedAt: at(0),
      });
      await em.flush();
      return p;
    },
    /** A conversation with an inbound and an outbound text message, written straight to the tables. */
    async chat(phone: string, minutes = 0) {
      const patientPhone = toE164(phone, 'IL') as string;
      const conversation = em.create(Conversation, {
        clinic,
        patientPhone,
        clinicPhone: '+97235550199',
        displayName: null,
        lastMessagePreview: 'Thanks',
        lastActivityAt: at(minutes + 1),
        lastInboundAt: at(minutes),
        lastOutboundAt: at(minutes + 1),
        isHandled: false,
        seq: 2,
        createdAt: at(minutes),
        updatedAt: at(minutes + 1),
      });
      const message = (direction: 'inbound' | 'outbound', text: string, m: number, seq: number) =>
        em.create(Message, {
          clinic,
          conversation,
          direction,
          type: 'text',
          fromPhone: direction === 'inbound' ? patientPhone : '+97235550199',
          toPhone: direction === 'inbound' ? '+97235550199' : patientPhone,
          patientPhone,
          text,
          seq,
          createdAt: at(m),
          updatedAt: at(m),
        });
      const inbound = message('inbound', 'Hello', minutes, 1);
      const outbound = message('outbound', 'Thanks', minutes + 1, 2);
      // With media (a key the store need not hold: only the link is asked for).
      Object.assign(outbound, {
        type: 'image',
        mediaType: 'image',
        mediaMime: 'image/png',
        mediaPath: 'med_1',
      });
      await em.flush();
      return { conversation, inbound, outbound };
    },
    /**
     * A call written straight to the table: answered and recorded, its recording available (a key
     * the store need not hold: only the link is asked for) unless `more` says otherwise.
     */
    async call(patient: Patient | null, minutes: number, more: Partial<Call> = {}) {
      const c = em.create(Call, {
        clinic,
        patient,
        direction: 'inbound',
        fromPhone: patient?.phone ?? '+972521234567',
        toPhone: '+97235550199',
        startedAt: at(minutes),
        endedAt: at(minutes + 2),
        durationSeconds: 120,
        answered: true,
        recorded: true,
        note: null,
        recordingAvailable: true,
        recordingPath: 'med_1',
        recordingMime: 'audio/wav',
        transcriptStatus: null,
        transcriptSummary: null,
        transcriptSegments: null,
        createdAt: at(minutes + 2),
        updatedAt: at(minutes + 2),
        ...more,
      });
      await em.flush();
      return c;
    },
  };
}
