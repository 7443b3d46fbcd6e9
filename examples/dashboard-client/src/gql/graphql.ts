/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** The input of createAppointment. */
export type CreateAppointmentInput = {
  /** A Branch id (br_…). */
  branchId: string;
  /** When it ends; defaults to start plus the appointment type's duration. */
  end?: string | null | undefined;
  /** A key of your choosing (up to 255 characters): the same key and input within 24 hours answer the first result and write nothing. */
  idempotencyKey?: string | null | undefined;
  /** Staff's note on the booking, up to 4000 characters. */
  note?: string | null | undefined;
  /** true books it outside the provider's working hours (an emergency on a closed day); without it such a time is a 422 on start. */
  outsideHours?: boolean | null | undefined;
  /** A Patient id (pat_…). */
  patientId: string;
  /** A Provider id (prv_…). */
  providerId: string;
  /** When it starts (ISO 8601 with an offset). */
  start: string;
  /** An AppointmentStatus id (aps_…). */
  statusId?: string | null | undefined;
  /** An AppointmentType id (apt_…). */
  typeId?: string | null | undefined;
};

/** The type of an event (the event catalog, docs/events.md): what happened, to which kind of object. */
export type EventType =
  /** An animal was added (veterinary clinics). */
  | 'ANIMAL_CREATED'
  /** An animal's details, or its owner's, changed (veterinary clinics). */
  | 'ANIMAL_UPDATED'
  /** An appointment was cancelled. */
  | 'APPOINTMENT_CANCELLED'
  /** An appointment was booked. */
  | 'APPOINTMENT_CREATED'
  /** An appointment changed (time, status, provider, branch, type, note). */
  | 'APPOINTMENT_UPDATED'
  /** A call ended; the first event of a call. */
  | 'CALL_COMPLETED'
  /** A call's recording finished downloading and can be fetched. */
  | 'CALL_RECORDING_AVAILABLE'
  /** A call's transcription succeeded. */
  | 'CALL_TRANSCRIPT_COMPLETED'
  /** A call's transcription failed; none will arrive. */
  | 'CALL_TRANSCRIPT_FAILED'
  /** A call's staff note was added or edited. */
  | 'CALL_UPDATED'
  /** An outbound message reached the patient's handset. */
  | 'CHAT_MESSAGE_DELIVERED'
  /** An outbound message failed (failure_reason is null in the event). */
  | 'CHAT_MESSAGE_FAILED'
  /** The patient opened an outbound message. */
  | 'CHAT_MESSAGE_READ'
  /** A patient sent the clinic a message. */
  | 'CHAT_MESSAGE_RECEIVED'
  /** An outbound message was accepted by the network. */
  | 'CHAT_MESSAGE_SENT'
  /** A patient was added (dental clinics). */
  | 'PATIENT_CREATED'
  /** A patient's details changed (dental clinics). */
  | 'PATIENT_UPDATED'
  /** A payment was cancelled or refunded. */
  | 'PAYMENT_CANCELLED'
  /** A payment or a refund was recorded. */
  | 'PAYMENT_RECORDED'
  /** A treatment was cancelled (removed). */
  | 'TREATMENT_CANCELLED'
  /** A treatment was recorded. */
  | 'TREATMENT_CREATED'
  /** A treatment changed. */
  | 'TREATMENT_UPDATED';

export type PatientsWithAppointmentsQueryVariables = Exact<{
  patients: number;
  appointments: number;
}>;


export type PatientsWithAppointmentsQuery = { patients: { edges: Array<{ node: { id: string, firstName: string | null, lastName: string | null, phone: string | null, appointments: { edges: Array<{ node: { id: string, start: string, end: string, cancelledAt: string | null, status: { name: string } | null, provider: { name: string } | null, type: { name: string } | null } }> } | null } }> } | null };

export type AppointmentTypesQueryVariables = Exact<{ [key: string]: never; }>;


export type AppointmentTypesQuery = { appointmentTypes: Array<{ id: string, name: string, durationMinutes: number }> | null };

export type FreeSlotsQueryVariables = Exact<{
  typeId: string;
  from: string;
  to: string;
}>;


export type FreeSlotsQuery = { availability: Array<{ start: string, end: string, branchId: string, providerId: string }> | null };

export type BookAppointmentMutationVariables = Exact<{
  input: CreateAppointmentInput;
}>;


export type BookAppointmentMutation = { createAppointment: { appointment: { id: string, start: string, end: string, patient: { id: string }, status: { name: string } | null } } };

export type NewestEventQueryVariables = Exact<{ [key: string]: never; }>;


export type NewestEventQuery = { events: { edges: Array<{ node: { id: string } }> } | null };

export type ClinicEventsSubscriptionVariables = Exact<{
  types?: Array<EventType> | EventType | null | undefined;
  after?: string | number | null | undefined;
}>;


export type ClinicEventsSubscription = { events: { id: string, type: EventType, createdAt: string, data: unknown } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const PatientsWithAppointmentsDocument = new TypedDocumentString(`
    query PatientsWithAppointments($patients: Int!, $appointments: Int!) {
  patients(first: $patients) {
    edges {
      node {
        id
        firstName
        lastName
        phone
        appointments(first: $appointments) {
          edges {
            node {
              id
              start
              end
              status {
                name
              }
              provider {
                name
              }
              type {
                name
              }
              cancelledAt
            }
          }
        }
      }
    }
  }
}
    `) as unknown as TypedDocumentString<PatientsWithAppointmentsQuery, PatientsWithAppointmentsQueryVariables>;
export const AppointmentTypesDocument = new TypedDocumentString(`
    query AppointmentTypes {
  appointmentTypes {
    id
    name
    durationMinutes
  }
}
    `) as unknown as TypedDocumentString<AppointmentTypesQuery, AppointmentTypesQueryVariables>;
export const FreeSlotsDocument = new TypedDocumentString(`
    query FreeSlots($typeId: String!, $from: String!, $to: String!) {
  availability(appointmentTypeId: $typeId, from: $from, to: $to) {
    start
    end
    branchId
    providerId
  }
}
    `) as unknown as TypedDocumentString<FreeSlotsQuery, FreeSlotsQueryVariables>;
export const BookAppointmentDocument = new TypedDocumentString(`
    mutation BookAppointment($input: CreateAppointmentInput!) {
  createAppointment(input: $input) {
    appointment {
      id
      start
      end
      patient {
        id
      }
      status {
        name
      }
    }
  }
}
    `) as unknown as TypedDocumentString<BookAppointmentMutation, BookAppointmentMutationVariables>;
export const NewestEventDocument = new TypedDocumentString(`
    query NewestEvent {
  events(first: 1) {
    edges {
      node {
        id
      }
    }
  }
}
    `) as unknown as TypedDocumentString<NewestEventQuery, NewestEventQueryVariables>;
export const ClinicEventsDocument = new TypedDocumentString(`
    subscription ClinicEvents($types: [EventType!], $after: ID) {
  events(types: $types, after: $after) {
    id
    type
    createdAt
    data
  }
}
    `) as unknown as TypedDocumentString<ClinicEventsSubscription, ClinicEventsSubscriptionVariables>;