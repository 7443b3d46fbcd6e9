import type { ResultOf } from './client.ts';
import { graphql } from './gql/index.ts';

/**
 * Every operation of the dashboard, and the one schema value it names: the one file a schema
 * change touches. The rest of the program reads the types generated from these documents
 * (`npm run typed-client`), so a renamed field or argument is an edit here, and the compiler
 * names every use of it elsewhere.
 */

export const PatientsWithAppointments = graphql(`
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
`);

export const AppointmentTypes = graphql(`
  query AppointmentTypes {
    appointmentTypes {
      id
      name
      durationMinutes
    }
  }
`);

export const FreeSlots = graphql(`
  query FreeSlots($typeId: String!, $from: String!, $to: String!) {
    availability(appointmentTypeId: $typeId, from: $from, to: $to) {
      start
      end
      branchId
      providerId
    }
  }
`);

export const BookAppointment = graphql(`
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
`);

export const NewestEvent = graphql(`
  query NewestEvent {
    events(first: 1) {
      edges {
        node {
          id
        }
      }
    }
  }
`);

export const ClinicEvents = graphql(`
  subscription ClinicEvents($types: [EventType!], $after: ID) {
    events(types: $types, after: $after) {
      id
      type
      createdAt
      data
    }
  }
`);

/** The event a booking records; typed by the schema, so an enum of event types shows up here. */
export const APPOINTMENT_CREATED: ResultOf<typeof ClinicEvents>['events']['type'] = 'APPOINTMENT_CREATED';
