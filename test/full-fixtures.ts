import type { MikroORM } from '@mikro-orm/postgresql';
import {
  AppointmentStatus,
  AppointmentType,
  BillingAccount,
  Branch,
  Breed,
  Clinic,
  Measurement,
  Provider,
  TreatmentMenuItem,
  Vaccine,
} from '../src/entities/index.ts';
import { fixtures } from './fixtures.ts';

/**
 * A veterinary clinic whose rows give every nullable field of every resource a value somewhere
 * (and null elsewhere where it can be), for test/resource-parity.test.ts. A new nullable field
 * needs a value here: that test fails until it has one.
 */
export async function fullFixtures(orm: MikroORM, clinicId: number) {
  const fx = fixtures(orm, clinicId);
  const { em } = fx;
  const clinic = em.getReference(Clinic, clinicId);
  const c = await fx.catalog();

  // Catalog rows with the values the base fixtures leave null.
  em.create(Branch, {
    clinic,
    name: 'North branch',
    phone: null,
    address: {
      line1: '2 Ha-Atsmaut',
      line2: 'Floor 3',
      city: 'Haifa',
      postal_code: '3303100',
      country: 'IL',
    },
    color: null,
  });
  em.create(Branch, { clinic, name: 'Mobile unit', phone: null, address: null, color: null });
  const longVisit = em.create(AppointmentType, {
    clinic,
    name: 'Surgery',
    durationMinutes: 90,
    color: '#a00',
  });
  const vet = em.create(Provider, { clinic, name: 'Dr. Katz', type: 'veterinarian', color: '#0a0' });
  em.create(TreatmentMenuItem, { clinic, name: 'Consultation', code: null, price: null, color: '#ccc' });
  em.create(Breed, { clinic, name: 'Mixed', species: null });
  em.create(Vaccine, {
    clinic,
    name: 'Leptospirosis',
    code: null,
    species: null,
    intervalMonths: null,
    nextVaccine: null,
    price: null,
    batchRequired: false,
  });
  em.create(Measurement, { clinic, name: 'Mood', unit: null, isRequired: false });
  em.create(AppointmentStatus, { clinic, name: 'No-show', color: '#999', enabled: false });
  em.create(BillingAccount, { clinic, businessName: 'Clinic Pharmacy', businessId: null });
  await em.flush();

  const owner = await fx.owner({ first: 'Noa', last: 'Levi', phone: '054-123-0000' });
  const rex = await fx.patient({
    first: 'Rex',
    last: 'Levi',
    phone: '054-123-0000',
    email: 'noa@example.com',
    owner,
    species: c.species,
    breed: c.breed,
    status: c.patientStatus,
  });
  const stray = await fx.patient({ first: null, last: null });
  Object.assign(stray, {
    gender: null,
    birthDate: null,
    address: null,
    contacts: null,
    balance: null,
    idNumber: null,
  });

  const first = await fx.appointment(rex, { branch: c.branch }, 60);
  const full = await fx.appointment(
    rex,
    { branch: c.branch, type: longVisit, status: c.status, provider: vet },
    120,
  );
  Object.assign(full, { note: 'Bring the vaccination card', cancelledAt: new Date('2026-01-01T08:00:00Z') });
  await fx.appointment(stray, { branch: c.branch, type: c.type }, 30);

  const t = await fx.treatment(rex, { menuItem: c.menuItem, appointment: full }, 130);
  Object.assign(t, { provider: vet, note: 'Tolerated well', cancelledAt: new Date('2026-01-02T08:00:00Z') });
  const bare = await fx.treatment(rex, { appointment: first }, 70);
  Object.assign(bare, { description: null, teeth: null, price: null, status: 'planned' });

  const paid = await fx.payment(rex, c.account, 140);
  Object.assign(paid, { note: 'Paid at the desk' });
  const refund = await fx.payment(rex, c.account, 150, paid);
  Object.assign(refund, { receiptNumber: null, cancelledAt: new Date('2026-01-03T08:00:00Z') });
  await em.flush();
  return { rex: `pat_${rex.id}`, stray: `pat_${stray.id}` };
}
