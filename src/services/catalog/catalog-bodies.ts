/**
 * What a catalog list's writes need beyond its fields: the request bodies' example, and the value
 * a creation gives a field it may leave out (its definition's `create: 'optional'`). The fields
 * themselves, and which writes take them, are the resource definitions' (resources/*.ts).
 */
export interface CatalogBody {
  example: Record<string, unknown>;
  /** By column property: the non-null fields a creation may leave out. */
  defaults?: Record<string, unknown>;
}

export const catalogBodies: Record<string, CatalogBody> = {
  Branch: {
    example: {
      name: 'North branch',
      phone: '03-555-0100',
      address: { line1: '12 Herzl St', city: 'Haifa', postal_code: '3303112', country: 'IL' },
      color: '#336699',
    },
  },
  AppointmentType: { example: { name: 'Check-up', duration_minutes: 30, color: '#4caf50' } },
  AppointmentStatus: { example: { name: 'Arrived', color: '#00a86b' }, defaults: { enabled: true } },
  TreatmentMenuItem: {
    example: { name: 'Scaling and polishing', code: 'D1110', price: 250, color: '#2196f3' },
  },
  Provider: { example: { name: 'Dr. Maya Cohen', type: 'dentist', color: '#9c27b0' } },
  BillingAccount: { example: { business_name: 'Smile Clinic Ltd.', business_id: '515000000' } },
  Species: { example: { name: 'Rabbit' } },
  Breed: { example: { name: 'Labrador Retriever', species_id: 'spc_1' } },
  Vaccine: {
    example: { name: 'Rabies', code: 'RB', species_id: 'spc_1', interval_months: 12, price: 100 },
    defaults: { batchRequired: false },
  },
  Measurement: {
    example: { name: 'Weight', unit: 'kg', is_required: true },
    defaults: { isRequired: false },
  },
};
