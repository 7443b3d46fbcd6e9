import { addressInput } from '../contact-input.ts';
import { amount2, color, idOf, name, text, z } from '../write-input.ts';

/**
 * The request body of each written catalog list, by the list's noun, in the read shape's field
 * names (`<name>_id` for a reference). From each, src/services/catalog/catalog-writes.ts derives
 * the create body (`required` required, the rest optional) and the update body (everything
 * optional; `clearable` fields take null to clear). How a field is stored follows from the
 * resource definition (its column or relation), so it is not repeated here.
 */
export interface CatalogBody {
  required: Record<string, z.ZodType>;
  /** Non-null fields with a default on creation (`defaults`). */
  optional?: Record<string, z.ZodType>;
  defaults?: Record<string, unknown>;
  /** Nullable fields: null (or absence on creation) leaves them empty. */
  clearable?: Record<string, z.ZodType>;
  example: Record<string, unknown>;
}

const label = name(255).meta({ description: "The entry's name as staff see it (up to 255 characters)." });
const code = text(32).meta({ description: 'A short code, e.g. a procedure code.' });
const price = amount2(0).meta({ description: 'A price, at most two decimals.' });
const phone = text(40).meta({ description: 'Local (035550100) or international (+972…) form.' });

export const catalogBodies: Record<string, CatalogBody> = {
  Branch: {
    required: { name: label },
    clearable: { phone, address: addressInput, color },
    example: {
      name: 'North branch',
      phone: '03-555-0100',
      address: { line1: '12 Herzl St', city: 'Haifa', postal_code: '3303112', country: 'IL' },
      color: '#336699',
    },
  },
  AppointmentType: {
    required: {
      name: label,
      duration_minutes: z
        .number()
        .int()
        .min(5)
        .max(1440)
        .meta({ description: 'Default duration, 5 to 1440 minutes.' }),
    },
    clearable: { color },
    example: { name: 'Check-up', duration_minutes: 30, color: '#4caf50' },
  },
  AppointmentStatus: {
    required: { name: label, color },
    optional: {
      enabled: z.boolean().meta({ description: 'Whether staff can set it (default true).' }),
    },
    defaults: { enabled: true },
    example: { name: 'Arrived', color: '#00a86b' },
  },
  TreatmentMenuItem: {
    required: { name: label },
    clearable: { code, price, color, category_id: idOf('TreatmentCategory') },
    example: { name: 'Scaling and polishing', code: 'D1110', price: 250, color: '#2196f3' },
  },
  Provider: {
    required: {
      name: label,
      type: name(64).meta({ description: 'e.g. dentist, hygienist, veterinarian.' }),
    },
    clearable: { color },
    example: { name: 'Dr. Maya Cohen', type: 'dentist', color: '#9c27b0' },
  },
  BillingAccount: {
    required: { business_name: label },
    clearable: {
      business_id: text(64).meta({ description: 'Registered number printed on receipts.' }),
    },
    example: { business_name: 'Smile Clinic Ltd.', business_id: '515000000' },
  },
  Species: {
    required: { name: label },
    example: { name: 'Rabbit' },
  },
  Breed: {
    required: { name: label },
    clearable: { species_id: idOf('Species') },
    example: { name: 'Labrador Retriever', species_id: 'spc_1' },
  },
  Vaccine: {
    required: { name: label },
    optional: {
      batch_required: z
        .boolean()
        .meta({ description: 'Whether a batch number must be recorded (default false).' }),
    },
    defaults: { batch_required: false },
    clearable: {
      code,
      species_id: idOf('Species'),
      interval_months: z.number().int().min(1).max(600).meta({ description: 'Months until the next dose.' }),
      next_vaccine_id: idOf('Vaccine'),
      price,
    },
    example: { name: 'Rabies', code: 'RB', species_id: 'spc_1', interval_months: 12, price: 100 },
  },
  Measurement: {
    required: { name: label },
    optional: {
      is_required: z.boolean().meta({ description: 'Whether every visit records it (default false).' }),
    },
    defaults: { is_required: false },
    clearable: { unit: text(16).meta({ description: 'e.g. kg, °C.' }) },
    example: { name: 'Weight', unit: 'kg', is_required: true },
  },
};
