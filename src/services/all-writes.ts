/**
 * Loads every write definition (each module registers its writes with `defineWrite`), so the
 * routes, the schema and the OpenAPI document see them all. A new write module is added here.
 */
import './appointments/appointment-writes.ts';
import './calls/call-writes.ts';
import './payments/payment-writes.ts';
import './treatments/treatment-writes.ts';
// Last: their animals are Patient rows of veterinary clinics, and tests that reuse the last
// created object of each kind at a dental clinic would otherwise be handed an animal.
import './patients/patient-writes.ts';
import './patients/owner-writes.ts';
// After those: their examples add catalog entries (a second billing account, which makes a
// payment's billing_account_id required), and test/openapi.test.ts sends examples in this order.
import './catalog/catalog-writes.ts';
import './availability/working-hours-writes.ts';
import './webhooks/webhook-writes.ts';
import './webhooks/delivery-writes.ts';
import './webhooks/sample-events.ts';
// Chat's (their GraphQL and Rest faces are written in src/schema/chat/mutations.ts).
import './chat/react.ts';
import './chat/handled.ts';
// Last: test/openapi.test.ts reacts to the last message it created, and a sent one is outside
// the patient's window.
import './chat/send.ts';

export { allWrites } from './writes.ts';
