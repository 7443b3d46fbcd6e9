/* eslint-disable */
import * as types from './graphql.ts';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query PatientsWithAppointments($patients: Int!, $appointments: Int!) {\n    patients(first: $patients) {\n      edges {\n        node {\n          id\n          firstName\n          lastName\n          phone\n          appointments(first: $appointments) {\n            edges {\n              node {\n                id\n                start\n                end\n                status {\n                  name\n                }\n                provider {\n                  name\n                }\n                type {\n                  name\n                }\n                cancelledAt\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.PatientsWithAppointmentsDocument,
    "\n  query AppointmentTypes {\n    appointmentTypes {\n      id\n      name\n      durationMinutes\n    }\n  }\n": typeof types.AppointmentTypesDocument,
    "\n  query FreeSlots($typeId: String!, $from: String!, $to: String!) {\n    availability(appointmentTypeId: $typeId, from: $from, to: $to) {\n      start\n      end\n      branchId\n      providerId\n    }\n  }\n": typeof types.FreeSlotsDocument,
    "\n  mutation BookAppointment($input: CreateAppointmentInput!) {\n    createAppointment(input: $input) {\n      appointment {\n        id\n        start\n        end\n        patient {\n          id\n        }\n        status {\n          name\n        }\n      }\n    }\n  }\n": typeof types.BookAppointmentDocument,
    "\n  query NewestEvent {\n    events(first: 1) {\n      edges {\n        node {\n          id\n        }\n      }\n    }\n  }\n": typeof types.NewestEventDocument,
    "\n  subscription ClinicEvents($types: [EventType!], $after: ID) {\n    events(types: $types, after: $after) {\n      id\n      type\n      createdAt\n      data\n    }\n  }\n": typeof types.ClinicEventsDocument,
};
const documents: Documents = {
    "\n  query PatientsWithAppointments($patients: Int!, $appointments: Int!) {\n    patients(first: $patients) {\n      edges {\n        node {\n          id\n          firstName\n          lastName\n          phone\n          appointments(first: $appointments) {\n            edges {\n              node {\n                id\n                start\n                end\n                status {\n                  name\n                }\n                provider {\n                  name\n                }\n                type {\n                  name\n                }\n                cancelledAt\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n": types.PatientsWithAppointmentsDocument,
    "\n  query AppointmentTypes {\n    appointmentTypes {\n      id\n      name\n      durationMinutes\n    }\n  }\n": types.AppointmentTypesDocument,
    "\n  query FreeSlots($typeId: String!, $from: String!, $to: String!) {\n    availability(appointmentTypeId: $typeId, from: $from, to: $to) {\n      start\n      end\n      branchId\n      providerId\n    }\n  }\n": types.FreeSlotsDocument,
    "\n  mutation BookAppointment($input: CreateAppointmentInput!) {\n    createAppointment(input: $input) {\n      appointment {\n        id\n        start\n        end\n        patient {\n          id\n        }\n        status {\n          name\n        }\n      }\n    }\n  }\n": types.BookAppointmentDocument,
    "\n  query NewestEvent {\n    events(first: 1) {\n      edges {\n        node {\n          id\n        }\n      }\n    }\n  }\n": types.NewestEventDocument,
    "\n  subscription ClinicEvents($types: [EventType!], $after: ID) {\n    events(types: $types, after: $after) {\n      id\n      type\n      createdAt\n      data\n    }\n  }\n": types.ClinicEventsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PatientsWithAppointments($patients: Int!, $appointments: Int!) {\n    patients(first: $patients) {\n      edges {\n        node {\n          id\n          firstName\n          lastName\n          phone\n          appointments(first: $appointments) {\n            edges {\n              node {\n                id\n                start\n                end\n                status {\n                  name\n                }\n                provider {\n                  name\n                }\n                type {\n                  name\n                }\n                cancelledAt\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').PatientsWithAppointmentsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AppointmentTypes {\n    appointmentTypes {\n      id\n      name\n      durationMinutes\n    }\n  }\n"): typeof import('./graphql.ts').AppointmentTypesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FreeSlots($typeId: String!, $from: String!, $to: String!) {\n    availability(appointmentTypeId: $typeId, from: $from, to: $to) {\n      start\n      end\n      branchId\n      providerId\n    }\n  }\n"): typeof import('./graphql.ts').FreeSlotsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation BookAppointment($input: CreateAppointmentInput!) {\n    createAppointment(input: $input) {\n      appointment {\n        id\n        start\n        end\n        patient {\n          id\n        }\n        status {\n          name\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').BookAppointmentDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NewestEvent {\n    events(first: 1) {\n      edges {\n        node {\n          id\n        }\n      }\n    }\n  }\n"): typeof import('./graphql.ts').NewestEventDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ClinicEvents($types: [EventType!], $after: ID) {\n    events(types: $types, after: $after) {\n      id\n      type\n      createdAt\n      data\n    }\n  }\n"): typeof import('./graphql.ts').ClinicEventsDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
