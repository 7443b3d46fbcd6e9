import type { EntityManager } from '@mikro-orm/postgresql';
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
} from '../entities/catalog.ts';
import type { Clinic } from '../entities/clinic.ts';

/** The reference data a clinic of each kind needs before patients and appointments make sense. */
export interface SeededCatalog {
  patientStatuses: PatientStatus[];
  branches: Branch[];
  appointmentTypes: AppointmentType[];
  /** By name, because the seeders pick statuses by meaning (Completed for past visits, ...). */
  appointmentStatuses: Record<AppointmentStatusName, AppointmentStatus>;
  menu: TreatmentMenuItem[];
  providers: Provider[];
  billingAccounts: BillingAccount[];
  species: Species[];
  breeds: Breed[];
  vaccines: Vaccine[];
  measurements: Measurement[];
}

export const appointmentStatusNames = [
  'Scheduled',
  'Confirmed',
  'Arrived',
  'Completed',
  'No-show',
  'Cancelled',
  'Pending confirmation',
] as const;
export type AppointmentStatusName = (typeof appointmentStatusNames)[number];

const statusColors: Record<AppointmentStatusName, string> = {
  Scheduled: '#3B82F6',
  Confirmed: '#10B981',
  Arrived: '#F59E0B',
  Completed: '#6B7280',
  'No-show': '#EF4444',
  Cancelled: '#9CA3AF',
  'Pending confirmation': '#A855F7',
};

// CDT procedure codes with typical private-clinic prices in ILS.
const dentalMenu: Record<string, [name: string, code: string, price: number][]> = {
  Diagnostics: [
    ['Periodic oral evaluation', 'D0120', 150],
    ['Comprehensive oral evaluation', 'D0150', 250],
    ['Full mouth X-rays', 'D0210', 300],
    ['Bitewing X-rays (4 films)', 'D0274', 120],
  ],
  Preventive: [
    ['Adult cleaning (prophylaxis)', 'D1110', 350],
    ['Fluoride varnish', 'D1206', 90],
    ['Sealant per tooth', 'D1351', 140],
  ],
  Restorative: [
    ['Composite filling, one surface', 'D2391', 450],
    ['Composite filling, two surfaces', 'D2392', 600],
    ['Amalgam filling, two surfaces', 'D2150', 380],
  ],
  Endodontics: [
    ['Root canal, anterior', 'D3310', 1800],
    ['Root canal, molar', 'D3330', 2900],
  ],
  Periodontics: [['Scaling and root planing, per quadrant', 'D4341', 550]],
  'Oral surgery': [
    ['Extraction, erupted tooth', 'D7140', 400],
    ['Surgical extraction', 'D7210', 900],
  ],
  Prosthodontics: [
    ['Porcelain/ceramic crown', 'D2740', 3500],
    ['Implant body placement', 'D6010', 5800],
  ],
  Cosmetic: [['In-office teeth whitening', 'D9972', 1500]],
};

const vetMenu: Record<string, [name: string, code: string, price: number][]> = {
  Consultations: [
    ['General consultation', 'VET-001', 220],
    ['Follow-up visit', 'VET-002', 120],
    ['Emergency consultation', 'VET-003', 450],
  ],
  Preventive: [
    ['Vaccination visit', 'VET-010', 90],
    ['Deworming', 'VET-011', 60],
    ['Microchip implant', 'VET-012', 180],
    ['Spirocerca prevention injection', 'VET-013', 110],
  ],
  Diagnostics: [
    ['Complete blood panel', 'VET-020', 380],
    ['X-ray, two views', 'VET-021', 420],
    ['Abdominal ultrasound', 'VET-022', 550],
  ],
  Surgery: [
    ['Spay (female cat)', 'VET-030', 650],
    ['Neuter (male dog, up to 20 kg)', 'VET-031', 900],
    ['Dental cleaning under anaesthesia', 'VET-032', 1100],
  ],
  Grooming: [['Nail trim', 'VET-040', 50]],
};

const palette = ['#F87171', '#FBBF24', '#34D399', '#60A5FA', '#A78BFA', '#F472B6', '#2DD4BF', '#FB923C'];

/**
 * Creates the catalog of a clinic of its kind (not flushed: the caller flushes in its own
 * transaction). Used by the demo and, for a clinic that has none, by the bulk patient seeder.
 */
export function seedCatalog(em: EntityManager, clinic: Clinic): SeededCatalog {
  const vet = clinic.kind === 'veterinary';
  const brand = clinic.name.replace(/\s+[–-].*$/, '');
  const color = (i: number) => palette[i % palette.length];

  const patientStatuses = (
    vet
      ? [
          ['Active', '#22C55E'],
          ['New', '#3B82F6'],
          ['Inactive', '#9CA3AF'],
          ['Deceased', '#111827'],
        ]
      : [
          ['Active', '#22C55E'],
          ['New', '#3B82F6'],
          ['Inactive', '#9CA3AF'],
          ['VIP', '#A855F7'],
          ['In debt', '#EF4444'],
        ]
  ).map(([name, c]) => em.create(PatientStatus, { clinic, name, color: c }));

  let branchCount = 0;
  const branch = (
    place: string,
    phone: string,
    line1: string,
    line2: string | null,
    city: string,
    postal: string,
  ) =>
    em.create(Branch, {
      clinic,
      name: `${brand} – ${place}`,
      phone,
      address: { line1, line2, city, postal_code: postal, country: 'IL' },
      color: color(branchCount++),
    });
  const branches = vet
    ? [
        branch('Haifa', '+97248123456', '45 HaNasi Blvd', null, 'Haifa', '3463422'),
        branch('Kiryat Tivon', '+97249834567', '12 Alonim St', 'Ground floor', 'Kiryat Tivon', '3600012'),
      ]
    : [
        branch('Tel Aviv', '+97236123456', '120 Dizengoff St', 'Floor 3', 'Tel Aviv-Yafo', '6433222'),
        branch('Ramat Gan', '+97237512345', '33 Jabotinsky St', 'Suite 12', 'Ramat Gan', '5252002'),
      ];

  const appointmentTypes = (
    vet
      ? [
          ['Consultation', 20],
          ['Vaccination', 15],
          ['Surgery', 120],
          ['Dental cleaning', 60],
          ['Follow-up', 15],
          ['Grooming', 45],
        ]
      : [
          ['Check-up', 30],
          ['Cleaning', 45],
          ['Filling', 60],
          ['Root canal', 90],
          ['Crown fitting', 60],
          ['Extraction', 45],
          ['Emergency', 30],
        ]
  ).map(([name, minutes], i) =>
    em.create(AppointmentType, {
      clinic,
      name: name as string,
      durationMinutes: minutes as number,
      color: color(i + 2),
    }),
  );

  const appointmentStatuses = Object.fromEntries(
    appointmentStatusNames.map((name) => [
      name,
      // A clinic that switched a status off still has it on old appointments.
      em.create(AppointmentStatus, {
        clinic,
        name,
        color: statusColors[name],
        enabled: name !== 'Pending confirmation',
      }),
    ]),
  ) as Record<AppointmentStatusName, AppointmentStatus>;

  const menu: TreatmentMenuItem[] = [];
  Object.entries(vet ? vetMenu : dentalMenu).forEach(([categoryName, items], i) => {
    const category = em.create(TreatmentCategory, { clinic, name: categoryName });
    for (const [name, code, price] of items) {
      menu.push(em.create(TreatmentMenuItem, { clinic, name, code, price, color: color(i), category }));
    }
  });

  const providers = (
    vet
      ? [
          ['Dr. Amit Ben-David', 'veterinarian'],
          ['Dr. Shira Katz', 'veterinarian'],
          ['Tal Mizrahi', 'veterinary technician'],
        ]
      : [
          ['Dr. Dana Levi', 'dentist'],
          ['Dr. Yossi Cohen', 'dentist'],
          ['Dr. Éva Kovács', 'orthodontist'],
          ['Noa Peretz', 'hygienist'],
          ['Michal Azulay', 'hygienist'],
        ]
  ).map(([name, type], i) => em.create(Provider, { clinic, name, type, color: color(i + 4) }));

  const billingAccounts = (
    vet
      ? [
          [`${brand} Veterinary Services Ltd.`, '514987654'],
          ['Dr. Amit Ben-David (licensed dealer)', '032145678'],
        ]
      : [[`${brand} Ltd.`, '515123456']]
  ).map(([businessName, businessId]) => em.create(BillingAccount, { clinic, businessName, businessId }));

  const species: Species[] = [];
  const breeds: Breed[] = [];
  const vaccines: Vaccine[] = [];
  const measurements: Measurement[] = [];
  if (vet) {
    const breedsBySpecies: Record<string, string[]> = {
      Dog: [
        'Mixed breed',
        'Labrador Retriever',
        'German Shepherd',
        'Golden Retriever',
        'Canaan Dog',
        'Poodle',
        'French Bulldog',
        'Shih Tzu',
      ],
      Cat: ['Domestic Shorthair', 'Persian', 'Siamese', 'British Shorthair', 'Maine Coon'],
      Rabbit: ['Holland Lop', 'Netherland Dwarf'],
      Bird: ['Cockatiel', 'African Grey Parrot', 'Budgerigar'],
    };
    for (const [name, names] of Object.entries(breedsBySpecies)) {
      const s = em.create(Species, { clinic, name });
      species.push(s);
      for (const b of names) breeds.push(em.create(Breed, { clinic, name: b, species: s }));
    }
    const [dog, cat, rabbit] = species;
    // Primary series point at the next shot (next_vaccine), so reminders can be chained.
    const vac = (
      name: string,
      code: string,
      s: Species,
      intervalMonths: number | null,
      price: number,
      batchRequired = false,
      next?: Vaccine,
    ) => {
      const v = em.create(Vaccine, {
        clinic,
        name,
        code,
        species: s,
        intervalMonths,
        price,
        batchRequired,
        nextVaccine: next ?? null,
      });
      vaccines.push(v);
      return v;
    };
    const dhppBooster = vac('DHPPi booster', 'DHPPI-B', dog, 12, 120);
    const dhpp3 = vac('DHPPi puppy, 3rd dose', 'DHPPI-3', dog, 12, 110, false, dhppBooster);
    const dhpp2 = vac('DHPPi puppy, 2nd dose', 'DHPPI-2', dog, 1, 110, false, dhpp3);
    vac('DHPPi puppy, 1st dose', 'DHPPI-1', dog, 1, 110, false, dhpp2);
    // Rabies batch numbers must be recorded for the veterinary services' register.
    vac('Rabies (dog)', 'RAB-D', dog, 12, 90, true);
    const fvrcpBooster = vac('FVRCP booster', 'FVRCP-B', cat, 12, 120);
    const fvrcp2 = vac('FVRCP kitten, 2nd dose', 'FVRCP-2', cat, 12, 110, false, fvrcpBooster);
    vac('FVRCP kitten, 1st dose', 'FVRCP-1', cat, 1, 110, false, fvrcp2);
    vac('Rabies (cat)', 'RAB-C', cat, 12, 90, true);
    vac('FeLV', 'FELV', cat, 12, 140);
    vac('RHDV2 (rabbit)', 'RHDV2', rabbit, 12, 130, true);

    for (const [name, unit, isRequired] of [
      ['Weight', 'kg', true],
      ['Temperature', '°C', true],
      ['Heart rate', 'bpm', false],
      ['Respiratory rate', 'breaths/min', false],
      ['Body condition score (1-9)', null, false],
    ] as const) {
      measurements.push(em.create(Measurement, { clinic, name, unit, isRequired }));
    }
  }

  return {
    patientStatuses,
    branches,
    appointmentTypes,
    appointmentStatuses,
    menu,
    providers,
    billingAccounts,
    species,
    breeds,
    vaccines,
    measurements,
  };
}
