import type { EntityManager, MikroORM, RequiredEntityData } from '@mikro-orm/postgresql';
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
  Event,
  Measurement,
  Message,
  Owner,
  Patient,
  PatientStatus,
  Payment,
  Provider,
  Species,
  Template,
  Treatment,
  TreatmentCategory,
  TreatmentMenuItem,
  Vaccine,
  WebhookDelivery,
  WebhookSubscription,
  WorkingHours,
} from '../src/entities/index.ts';
import type { Address } from '../src/entities/tenant.ts';
import { toE164 } from '../src/lib/phone.ts';
import { foldedNames } from '../src/services/patients/search-columns.ts';
import { fixtures } from './fixtures.ts';

/**
 * Rows for test/resource-parity.test.ts, written straight through the ORM with the tenant filter.
 *
 * A veterinary clinic where every nullable field of every resource (and of every embedded shape,
 * at every place it is embedded) has a value in some row and is null in another, wherever the
 * database allows null; where two fields of one object could be confused (created_at and
 * updated_at, line1 and line2, ...) some row gives them different values. Three animals: Rex has
 * everything, Stray has nothing, Mitzi has the in-between cases (an owner with every field null,
 * a status without color, an address with missing keys, a contact without label, empty teeth).
 * Each has appointments, treatments and payments, so the patient embedded in records covers the
 * same cases. A new nullable field needs a value here: the parity test fails until it has one.
 */
export async function fullFixtures(orm: MikroORM, clinicId: number) {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { clinicId });
  const clinic = em.getReference(Clinic, clinicId);
  const t0 = new Date('2026-01-01T09:00:00Z').getTime();
  const at = (minutes: number) => new Date(t0 + minutes * 60_000);

  // ---- catalog: each nullable column set in one row, null in another ----
  const main = em.create(Branch, {
    clinic,
    name: 'Main branch',
    phone: '+97235550100',
    address: {
      line1: '1 Herzl St',
      line2: 'Floor 2',
      city: 'Tel Aviv',
      postal_code: '6100000',
      country: 'IL',
    },
    color: '#336699',
  });
  em.create(Branch, { clinic, name: 'Mobile unit', phone: null, address: null, color: null });
  em.create(Branch, {
    clinic,
    name: 'North branch',
    phone: '+97248880100',
    // Legacy row: keys missing from the stored JSON read as null.
    address: { city: 'Haifa' } as Address,
    color: null,
  });
  const checkup = em.create(AppointmentType, { clinic, name: 'Check-up', durationMinutes: 30, color: null });
  const surgery = em.create(AppointmentType, { clinic, name: 'Surgery', durationMinutes: 90, color: '#a00' });
  const scheduled = em.create(AppointmentStatus, { clinic, name: 'Scheduled', color: '#00f', enabled: true });
  const noShow = em.create(AppointmentStatus, { clinic, name: 'No-show', color: '#999', enabled: false });
  const preventive = em.create(TreatmentCategory, { clinic, name: 'Preventive' });
  const cleaning = em.create(TreatmentMenuItem, {
    clinic,
    name: 'Cleaning',
    code: 'D1110',
    price: 250,
    color: '#0cc',
    category: preventive,
  });
  const consultation = em.create(TreatmentMenuItem, {
    clinic,
    name: 'Consultation',
    code: null,
    price: null,
    color: null,
    category: null,
  });
  const vet = em.create(Provider, { clinic, name: 'Dr. Katz', type: 'veterinarian', color: '#0a0' });
  const nurse = em.create(Provider, { clinic, name: 'Nurse Ben', type: 'nurse', color: null });
  const account = em.create(BillingAccount, { clinic, businessName: 'Clinic Ltd.', businessId: '515000000' });
  const pharmacy = em.create(BillingAccount, { clinic, businessName: 'Clinic Pharmacy', businessId: null });
  const active = em.create(PatientStatus, { clinic, name: 'Active', color: '#0f0' });
  const archived = em.create(PatientStatus, { clinic, name: 'Archived', color: null });
  const dog = em.create(Species, { clinic, name: 'Dog' });
  const cat = em.create(Species, { clinic, name: 'Cat' });
  const beagle = em.create(Breed, { clinic, name: 'Beagle', species: dog });
  em.create(Breed, { clinic, name: 'Mixed', species: null });
  const booster = em.create(Vaccine, {
    clinic,
    name: 'Rabies booster',
    code: 'RB2',
    species: dog,
    intervalMonths: 36,
    nextVaccine: null,
    price: 120,
    batchRequired: true,
  });
  em.create(Vaccine, {
    clinic,
    name: 'Rabies',
    code: 'RB',
    species: dog,
    intervalMonths: 12,
    nextVaccine: booster,
    price: 100,
    batchRequired: true,
  });
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
  em.create(Measurement, { clinic, name: 'Weight', unit: 'kg', isRequired: true });
  em.create(Measurement, { clinic, name: 'Mood', unit: null, isRequired: false });

  // ---- one disabled entry of each catalog list (out of the lists, read by id) ----
  const retired = {
    createdAt: at(-3000),
    disabledAt: at(-2000),
    updatedAt: at(-1000),
  };
  em.create(Branch, { clinic, name: 'Old branch', phone: null, address: null, color: null, ...retired });
  em.create(AppointmentType, { clinic, name: 'Old type', durationMinutes: 45, color: null, ...retired });
  em.create(AppointmentStatus, { clinic, name: 'Old status', color: '#123', enabled: false, ...retired });
  em.create(TreatmentMenuItem, {
    clinic,
    name: 'Old item',
    code: null,
    price: null,
    color: null,
    category: null,
    ...retired,
  });
  em.create(Provider, { clinic, name: 'Dr. Former', type: 'dentist', color: null, ...retired });
  em.create(BillingAccount, { clinic, businessName: 'Old Ltd.', businessId: null, ...retired });
  em.create(Species, { clinic, name: 'Dodo', ...retired });
  em.create(Breed, { clinic, name: 'Old breed', species: null, ...retired });
  em.create(Vaccine, {
    clinic,
    name: 'Old vaccine',
    code: null,
    species: null,
    intervalMonths: null,
    nextVaccine: null,
    price: null,
    batchRequired: false,
    ...retired,
  });
  em.create(Measurement, { clinic, name: 'Old measure', unit: null, isRequired: false, ...retired });

  // ---- owners and animals ----
  const noa = em.create(Owner, {
    clinic,
    firstName: 'Noa',
    lastName: 'Levi',
    phone: toE164('054-123-0000', 'IL'),
    email: 'noa@example.com',
    // GET /v1/clients shows the address, and updated_at apart from created_at.
    address: {
      line1: '5 Rothschild Blvd',
      line2: 'Apt 4',
      city: 'Tel Aviv',
      postal_code: '6688101',
      country: 'IL',
    },
    createdAt: at(0),
    updatedAt: at(5),
  });
  const anonymous = em.create(Owner, {
    clinic,
    firstName: null,
    lastName: null,
    phone: null,
    email: null,
    address: null,
    createdAt: at(0),
    updatedAt: at(0),
  });
  const rex = em.create(Patient, {
    clinic,
    firstName: 'Rex',
    lastName: 'Levi',
    phone: toE164('054-123-0000', 'IL'),
    email: 'rex.levi@example.com',
    emailLower: 'rex.levi@example.com',
    gender: 'male',
    birthDate: '2020-05-01',
    status: active,
    ...foldedNames('Rex', 'Levi'),
    address: {
      line1: '5 Rothschild Blvd',
      line2: 'Apt 4',
      city: 'Tel Aviv',
      postal_code: '6688101',
      country: 'IL',
    },
    contacts: [{ type: 'phone', value: '+972501111111', label: 'work' }],
    balance: 12.5,
    idNumber: '000000018',
    owner: noa,
    species: dog,
    breed: beagle,
    createdAt: at(1),
    updatedAt: at(500),
  });
  const stray = em.create(Patient, {
    clinic,
    firstName: null,
    lastName: null,
    phone: null,
    email: null,
    emailLower: null,
    gender: null,
    birthDate: null,
    status: null,
    ...foldedNames(null, null),
    address: null,
    contacts: null,
    balance: null,
    idNumber: null,
    owner: null,
    species: null,
    breed: null,
    createdAt: at(2),
    updatedAt: at(2),
  });
  const mitzi = em.create(Patient, {
    clinic,
    firstName: 'Mitzi',
    lastName: null,
    phone: null,
    email: null,
    emailLower: null,
    gender: 'female',
    birthDate: '2021-02-03',
    status: archived,
    ...foldedNames('Mitzi', null),
    // Legacy row: an address saved with every line empty, its keys left out.
    address: {} as Address,
    contacts: [
      { type: 'email', value: 'mitzi@example.com', label: null },
      // Legacy row: no label key at all.
      { type: 'phone', value: '+972502222222' } as { type: 'phone'; value: string; label: null },
    ],
    balance: 0,
    idNumber: null,
    owner: anonymous,
    species: cat,
    breed: null,
    createdAt: at(3),
    updatedAt: at(600),
  });

  // ---- records: every patient has each kind; each nullable column set in one, null in another ----
  const appointment = (
    patient: Patient,
    minutes: number,
    // Any column of the entity: a field added to it takes its value here, with no list to extend.
    more: Partial<RequiredEntityData<Appointment>> = {},
  ) =>
    em.create(Appointment, {
      clinic,
      patient,
      branch: main,
      provider: null,
      type: null,
      status: null,
      startAt: at(minutes),
      endAt: at(minutes + 30),
      note: null,
      cancelledAt: null,
      cancellationReason: null,
      createdAt: at(0),
      updatedAt: at(0),
      ...more,
    });
  const visit = appointment(rex, 60);
  const operation = appointment(rex, 120, {
    provider: vet,
    type: surgery,
    status: scheduled,
    note: 'Bring the vaccination card',
    cancelledAt: at(100),
    cancellationReason: 'Owner asked to move it',
    updatedAt: at(100),
  });
  appointment(stray, 30, { type: checkup });
  appointment(mitzi, 90, { provider: nurse, status: noShow });

  const treatment = (patient: Patient, minutes: number, more: Partial<Treatment> = {}) =>
    em.create(Treatment, {
      clinic,
      patient,
      appointment: null,
      menuItem: null,
      provider: null,
      description: null,
      teeth: null,
      price: null,
      status: 'planned',
      performedAt: at(minutes),
      note: null,
      cancelledAt: null,
      cancellationReason: null,
      createdAt: at(0),
      updatedAt: at(0),
      ...more,
    });
  treatment(rex, 130, {
    appointment: operation,
    menuItem: cleaning,
    provider: vet,
    description: 'Scale and polish',
    teeth: ['11', '12'],
    price: 130,
    status: 'completed',
    note: 'Tolerated well',
    cancelledAt: at(200),
    cancellationReason: 'Recorded twice',
    updatedAt: at(200),
  });
  treatment(rex, 70, { appointment: visit });
  treatment(stray, 40, { menuItem: consultation, teeth: [], price: 0 });
  treatment(mitzi, 95, { menuItem: cleaning, provider: nurse, description: 'Nail trim', teeth: ['21'] });

  const payment = (patient: Patient, minutes: number, more: Partial<Payment> = {}) =>
    em.create(Payment, {
      clinic,
      patient,
      billingAccount: account,
      amount: 250,
      currency: 'ILS',
      methodType: 'card',
      methodDetails: { card_last4: '4242', card_brand: 'visa', holder: 'SECRET HOLDER' },
      isRefund: false,
      refundOf: null,
      receiptNumber: `R-${minutes}`,
      paidAt: at(minutes),
      note: null,
      cancelledAt: null,
      createdAt: at(0),
      updatedAt: at(0),
      ...more,
    });
  const paid = payment(rex, 140, { note: 'Paid at the desk' });
  payment(rex, 150, {
    amount: 50,
    isRefund: true,
    refundOf: paid,
    receiptNumber: null,
    cancelledAt: at(300),
    updatedAt: at(300),
  });
  payment(stray, 45, {
    billingAccount: pharmacy,
    methodType: 'cash',
    methodDetails: null,
    receiptNumber: null,
  });
  payment(mitzi, 100, { amount: 12.5, methodType: 'bank_transfer' });
  chatFixtures(em, clinic, rex.phone as string);
  // Two animals on the stranger's number (a shared phone): the thread matches both.
  const onSharedPhone = (firstName: string | null, lastName: string | null, minutes: number) =>
    em.create(Patient, {
      clinic,
      firstName,
      lastName,
      phone: STRANGER_PHONE,
      email: null,
      emailLower: null,
      gender: null,
      birthDate: null,
      status: null,
      ...foldedNames(firstName, lastName),
      address: null,
      contacts: null,
      balance: null,
      idNumber: null,
      owner: null,
      species: null,
      breed: null,
      createdAt: at(minutes),
      updatedAt: at(minutes),
    });
  const ghost = onSharedPhone('Bella', null, 4);
  const ghost2 = onSharedPhone(null, 'Shapiro', 5);
  for (const p of [ghost, ghost2]) {
    appointment(p, 10);
    treatment(p, 11);
    payment(p, 12);
  }
  callFixtures(em, clinic, rex, ghost, at);
  workingHours(em, clinic, [
    [vet, main, 1, 9 * 60, 13 * 60],
    [vet, main, 1, 14 * 60, 18 * 60],
    [nurse, main, 5, 8 * 60, 12 * 60 + 30],
  ]);
  await em.flush();
  return { patients: [rex, stray, mitzi, ghost, ghost2].map((p) => `pat_${p.id}`) };
}

const STRANGER_PHONE = '+972521112222';

/** Weekly working intervals (weekday, start and end in minutes), for working hours and availability. */
function workingHours(
  em: EntityManager,
  clinic: Clinic,
  rows: [provider: Provider, branch: Branch, weekday: number, start: number, end: number][],
) {
  for (const [provider, branch, weekday, startMinute, endMinute] of rows)
    em.create(WorkingHours, { clinic, provider, branch, weekday, startMinute, endMinute });
}

/**
 * Calls in each state: Rex's with its recording and a completed transcript (and a note), an
 * outbound one to an unknown number never answered, a withheld caller's with a failed
 * transcript, and one on the shared number (its oldest animal) answered but not recorded.
 */
function callFixtures(
  em: EntityManager,
  clinic: Clinic,
  rex: Patient,
  shared: Patient,
  at: (minutes: number) => Date,
) {
  const CLINIC_LINE = '+97235550199';
  const call = (minutes: number, seconds: number, more: Partial<Call>) =>
    em.create(Call, {
      clinic,
      patient: null,
      direction: 'inbound',
      fromPhone: null,
      toPhone: CLINIC_LINE,
      startedAt: at(minutes),
      endedAt: new Date(at(minutes).getTime() + seconds * 1000),
      durationSeconds: seconds,
      answered: true,
      recorded: false,
      note: null,
      recordingAvailable: false,
      recordingPath: null,
      recordingMime: null,
      transcriptStatus: null,
      transcriptSummary: null,
      transcriptSegments: null,
      createdAt: at(minutes + 5),
      updatedAt: at(minutes + 5),
      ...more,
    });
  call(160, 95, {
    patient: rex,
    fromPhone: rex.phone,
    recorded: true,
    note: 'Asked about the vaccination card',
    recordingAvailable: true,
    recordingPath: 'med_1',
    recordingMime: 'audio/mpeg',
    transcriptStatus: 'completed',
    transcriptSummary: 'The owner asked whether to bring the vaccination card.',
    transcriptSegments: [
      { start: 0, end: 2.5, speaker: 'clinic', text: 'Happy Paws, hello.' },
      { start: 3, end: 8.25, speaker: 'patient', text: 'Should I bring the vaccination card?' },
    ],
    updatedAt: at(180),
  });
  call(170, 0, {
    direction: 'outbound',
    fromPhone: CLINIC_LINE,
    toPhone: '+972549998877',
    answered: false,
  });
  call(175, 60, {
    recorded: true,
    recordingAvailable: true,
    recordingPath: 'med_2',
    recordingMime: 'audio/wav',
    transcriptStatus: 'failed',
  });
  call(178, 45, { patient: shared, fromPhone: STRANGER_PHONE });
}

/**
 * Events of a clinic as the outbox holds them (a change of the first patient, a chat message),
 * written as rows: the parity test compares how GET /v1/events and GraphQL read them back
 * (test/events-api.test.ts records them through real writes).
 */
export async function eventFixtures(orm: MikroORM, clinicId: number, patientId: string) {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { clinicId });
  const clinic = em.getReference(Clinic, clinicId);
  em.create(Event, {
    clinic,
    type: 'patient.updated',
    scope: 'patients:read',
    data: {
      id: patientId,
      first_name: 'Dana',
      last_name: null,
      tags: ['a', 1, true],
      address: { city: 'Haifa' },
    },
    createdAt: new Date('2026-10-30T08:00:00Z'),
  });
  em.create(Event, {
    clinic,
    type: 'chat.message.received',
    scope: 'chat:read',
    data: { id: 'in_1', direction: 'inbound', status: 'received', text: 'Hello' },
    createdAt: new Date('2026-10-31T09:30:00Z'),
  });
  await em.flush();
}

/**
 * Webhook subscriptions of a clinic as rows: one enabled (disabled_at and disabled_reason null),
 * one disabled after failures, and a deleted one that no read shows (test/webhooks.test.ts
 * creates them through the API).
 */
export async function webhookFixtures(orm: MikroORM, clinicId: number) {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { clinicId });
  const clinic = em.getReference(Clinic, clinicId);
  const base = { clinic, consecutiveFailures: 0, disabledAt: null, disabledReason: null, deletedAt: null };
  const first = em.create(WebhookSubscription, {
    ...base,
    url: 'https://hooks.example.com/a',
    eventTypes: [],
    enabled: true,
    description: 'The CRM sync.',
    secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1234',
    // Rotated: the replaced secret signs beside this one until then.
    previousSecret: 'whsec_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ0000',
    previousSecretExpiresAt: new Date('2026-10-03T08:00:00Z'),
    createdAt: new Date('2026-10-01T08:00:00Z'),
    updatedAt: new Date('2026-10-02T08:00:00Z'),
  });
  em.create(WebhookSubscription, {
    ...base,
    url: 'https://hooks.example.com/b',
    eventTypes: ['patient.created', 'call.completed'],
    enabled: false,
    secret: 'whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB5678',
    consecutiveFailures: 40,
    failingSince: new Date('2026-10-02T09:00:00Z'),
    disabledAt: new Date('2026-10-05T09:00:00Z'),
    disabledReason: 'Every delivery failed for 72 hours (last: status 500).',
    createdAt: new Date('2026-10-03T08:00:00Z'),
    updatedAt: new Date('2026-10-05T09:00:00Z'),
  });
  em.create(WebhookSubscription, {
    ...base,
    url: 'https://hooks.example.com/gone',
    eventTypes: [],
    enabled: false,
    secret: 'whsec_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC9999',
    deletedAt: new Date('2026-10-06T09:00:00Z'),
    createdAt: new Date('2026-10-04T08:00:00Z'),
    updatedAt: new Date('2026-10-06T09:00:00Z'),
  });
  await em.flush();
  await deliveryFixtures(orm, clinicId, first.id);
}

/**
 * A subscription's delivery log (GET /v1/webhooks/{id}/deliveries; the worker does not write it
 * yet): a failed attempt with every field, and one under way with every nullable field null, of
 * the clinic's first event (one is recorded if it has none).
 */
export async function deliveryFixtures(orm: MikroORM, clinicId: number, subscriptionId: number) {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { clinicId });
  const clinic = em.getReference(Clinic, clinicId);
  const event =
    (await em.findOne(Event, {}, { orderBy: { id: 'asc' } })) ??
    em.create(Event, { clinic, type: 'patient.created', scope: 'patients:read', data: {} });
  const attempt = {
    clinic,
    subscription: em.getReference(WebhookSubscription, subscriptionId),
    event,
    trigger: 'scheduled',
    status: 'failed',
    attempt: 1,
  };
  em.create(WebhookDelivery, {
    ...attempt,
    attemptedAt: new Date('2026-10-02T09:00:00Z'),
    responseStatus: 503,
    responseExcerpt: '{"error":"maintenance"}',
    error: 'HTTP 503',
    durationMs: 87,
    nextAttemptAt: new Date('2026-10-02T09:05:00Z'),
  });
  em.create(WebhookDelivery, {
    ...attempt,
    trigger: 'manual',
    // Only succeeded and failed exist (WebhookDeliveryStatus); this one's nulls cover the nullable fields.
    status: 'succeeded',
    attempt: 2,
    attemptedAt: new Date('2026-10-02T09:03:00Z'),
    responseStatus: null,
    responseExcerpt: null,
    error: null,
    durationMs: null,
    nextAttemptAt: null,
  });
  await em.flush();
}

/** A dental clinic: the base fixtures (test/fixtures.ts) with one patient and a record of each kind. */
export async function dentalFixtures(orm: MikroORM, clinicId: number) {
  const fx = fixtures(orm, clinicId);
  const c = await fx.catalog();
  const dana = await fx.patient({
    first: 'Dana',
    last: 'Cohen',
    phone: '052-777-0000',
    email: 'dana@example.com',
    status: c.patientStatus,
  });
  const bare = await fx.patient({ first: 'Omer', last: null });
  const visit = await fx.appointment(
    dana,
    { branch: c.branch, type: c.type, status: c.status, provider: c.provider },
    60,
  );
  await fx.appointment(bare, { branch: c.branch }, 90);
  await fx.treatment(dana, { menuItem: c.menuItem, appointment: visit }, 70);
  await fx.payment(dana, c.account, 80);
  await fx.call(dana, 100, { note: 'Called back' });
  workingHours(fx.em, fx.em.getReference(Clinic, clinicId), [
    [c.provider, c.branch, 1, 9 * 60, 12 * 60],
    [c.provider, c.branch, 3, 13 * 60, 24 * 60],
  ]);
  await fx.em.flush();
  return { patients: [dana, bare].map((p) => `pat_${p.id}`) };
}

/**
 * The chat inbox, against the test clock (2026-11-01T10:00Z): Rex's conversation (his phone, a
 * window open since 08:00) with a message of each kind and status; a stranger's number with
 * only an inbound message long ago (window closed, no patient); an empty conversation with
 * every nullable column null. Templates: one with every field, one with none.
 */
function chatFixtures(em: EntityManager, clinic: Clinic, rexPhone: string) {
  const at = (iso: string) => new Date(`2026-${iso}Z`);
  const clinicPhone = '+97235550199';
  const rexConv = em.create(Conversation, {
    clinic,
    patientPhone: rexPhone,
    clinicPhone,
    displayName: 'Noa L',
    lastMessagePreview: 'See you tomorrow',
    lastActivityAt: at('11-01T09:00:00'),
    lastInboundAt: at('11-01T08:00:00'),
    lastOutboundAt: at('11-01T09:00:00'),
    isHandled: true,
    seq: 7,
    createdAt: at('10-01T08:00:00'),
    updatedAt: at('11-01T09:30:00'),
  });
  const strangerPhone = STRANGER_PHONE;
  const stranger = em.create(Conversation, {
    clinic,
    patientPhone: strangerPhone,
    clinicPhone: null,
    displayName: null,
    lastMessagePreview: 'Hello?',
    lastActivityAt: at('10-20T12:00:00'),
    lastInboundAt: at('10-20T12:00:00'),
    lastOutboundAt: null,
    isHandled: false,
    seq: 8,
    createdAt: at('10-20T12:00:00'),
    updatedAt: at('10-20T12:00:00'),
  });
  em.create(Conversation, {
    clinic,
    patientPhone: '+972527773333',
    clinicPhone: null,
    displayName: null,
    lastMessagePreview: null,
    lastActivityAt: null,
    lastInboundAt: null,
    lastOutboundAt: null,
    isHandled: false,
    seq: 1,
    createdAt: at('09-01T00:00:00'),
    updatedAt: at('09-02T00:00:00'),
  });
  const base = {
    clinic,
    conversation: rexConv,
    fromPhone: null,
    toPhone: null,
    patientPhone: rexPhone,
    text: null,
    mediaType: null,
    mediaMime: null,
    mediaPath: null,
    mediaFilename: null,
    templateName: null,
    templateParams: null,
    repliedTo: null,
    reactionPatient: null,
    reactionClinic: null,
    failureReason: null,
    networkMessageId: null,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
    failedAt: null,
  };
  const inbound = { direction: 'inbound' as const, fromPhone: rexPhone, toPhone: clinicPhone };
  const outbound = { direction: 'outbound' as const, fromPhone: clinicPhone, toPhone: rexPhone };
  em.create(Message, {
    ...base,
    ...inbound,
    type: 'text',
    text: 'Can I book for tomorrow?',
    seq: 2,
    createdAt: at('10-31T07:00:00'),
    updatedAt: at('10-31T07:00:00'),
  });
  const reminder = em.create(Message, {
    ...base,
    ...outbound,
    type: 'text',
    text: 'Hi Noa, see you at 10:00',
    templateName: 'appointment_reminder',
    templateParams: ['Noa', '10:00'],
    reactionPatient: '👍',
    networkMessageId: 'sbx_fixture_1',
    sentAt: at('10-31T07:10:01'),
    deliveredAt: at('10-31T07:10:02'),
    readAt: at('10-31T07:20:00'),
    seq: 5,
    createdAt: at('10-31T07:10:00'),
    updatedAt: at('10-31T07:20:00'),
  });
  em.create(Message, {
    ...base,
    ...outbound,
    type: 'document',
    mediaType: 'document',
    mediaMime: 'application/pdf',
    mediaFilename: 'invoice.pdf',
    templateName: 'clinic_document',
    failureReason: 'The number is not on the messaging network.',
    sentAt: at('10-31T08:00:01'),
    failedAt: at('10-31T08:00:05'),
    seq: 4,
    createdAt: at('10-31T08:00:00'),
    updatedAt: at('10-31T08:00:05'),
  });
  em.create(Message, {
    ...base,
    ...inbound,
    type: 'image',
    text: 'This is the rash',
    mediaType: 'image',
    mediaMime: 'image/jpeg',
    mediaPath: 'fixture-media-1',
    repliedTo: reminder,
    reactionClinic: '❤️',
    seq: 6,
    createdAt: at('11-01T08:00:00'),
    updatedAt: at('11-01T08:05:00'),
  });
  em.create(Message, {
    ...base,
    ...outbound,
    fromPhone: null,
    type: 'text',
    text: 'See you tomorrow',
    seq: 7,
    createdAt: at('11-01T09:00:00'),
    updatedAt: at('11-01T09:00:00'),
  });
  em.create(Message, {
    ...base,
    ...inbound,
    conversation: stranger,
    fromPhone: strangerPhone,
    // Written before the clinic had a number of its own.
    toPhone: null,
    patientPhone: strangerPhone,
    type: 'sticker',
    seq: 8,
    createdAt: at('10-20T12:00:00'),
    updatedAt: at('10-20T12:00:00'),
  });
  em.create(Template, {
    clinic,
    name: 'appointment_reminder',
    displayName: 'Appointment reminder',
    language: 'he',
    modelType: 'wa_chat_preview',
    category: 'UTILITY',
    status: 'APPROVED',
    rejectionReason: null,
    parameterCount: 2,
    body: 'Hi {{1}}, see you at {{2}}',
    header: { type: 'text', text: 'Reminder' },
    footer: { text: 'Reply STOP to opt out' },
    buttons: [{ type: 'quick_reply', text: 'OK' }],
    hasActiveVersion: true,
    role: null,
  });
  em.create(Template, {
    clinic,
    name: 'spring_promo',
    displayName: null,
    language: null,
    modelType: null,
    category: null,
    status: 'REJECTED',
    rejectionReason: 'Promotional content in a utility template',
    parameterCount: null,
    body: null,
    header: null,
    footer: null,
    buttons: null,
    hasActiveVersion: false,
    role: null,
  });
  // A template the network reports without a review state yet.
  em.create(Template, {
    clinic,
    name: 'draft_welcome',
    displayName: 'Welcome',
    language: 'en',
    modelType: 'patient',
    category: 'MARKETING',
    status: null,
    rejectionReason: null,
    parameterCount: 0,
    body: 'Welcome to the clinic',
    header: null,
    footer: null,
    buttons: null,
    hasActiveVersion: true,
    role: null,
  });
}
