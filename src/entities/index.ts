import type { EntityName } from '@mikro-orm/core';
import { ApiKey } from './api-key.ts';
import {
  AppointmentStatus,
  AppointmentType,
  BillingAccount,
  Branch,
  Breed,
  Measurement,
  PatientStatus,
  Provider,
  Species,
  TreatmentCategory,
  TreatmentMenuItem,
  Vaccine,
} from './catalog.ts';
import { Conversation, Message, Template } from './chat.ts';
import { Clinic } from './clinic.ts';
import { Appointment, Call, Payment, Treatment } from './clinical.ts';
import { MediaObject } from './media.ts';
import { Owner, Patient } from './patient.ts';
import { Event, WebhookDelivery, WebhookSubscription } from './webhooks.ts';
import { WorkingHours } from './working-hours.ts';

export * from './api-key.ts';
export * from './catalog.ts';
export * from './chat.ts';
export * from './clinic.ts';
export * from './clinical.ts';
export * from './global-tables.ts';
export * from './media.ts';
export * from './patient.ts';
export type { Address } from './tenant.ts';
export * from './webhooks.ts';
export * from './working-hours.ts';

/** Entities whose rows belong to one clinic: the `tenant` filter applies to all of them. */
export const tenantEntities = [
  PatientStatus,
  Owner,
  Patient,
  Branch,
  AppointmentType,
  AppointmentStatus,
  TreatmentCategory,
  TreatmentMenuItem,
  Provider,
  BillingAccount,
  Species,
  Breed,
  Vaccine,
  Measurement,
  Appointment,
  Treatment,
  Payment,
  Call,
  Conversation,
  Message,
  Template,
  Event,
  WebhookSubscription,
  WebhookDelivery,
  MediaObject,
  WorkingHours,
];

export const allEntities = [Clinic, ApiKey, ...tenantEntities];

const byName = new Map<string, (typeof allEntities)[number]>(allEntities.map((e) => [e.name, e]));

/** The entity class of a name (resource definitions name their entity by its class name). */
export function entityNamed(name: string): EntityName<any> {
  const entity = byName.get(name);
  if (!entity) throw new Error(`No entity named ${name}.`);
  return entity;
}

const tenantNames = new Set<string>(tenantEntities.map((e) => e.name));

/** Whether the `tenant` filter scopes this entity's rows (the list above is the one place that says). */
export const isTenantEntity = (className: string): boolean => tenantNames.has(className);
