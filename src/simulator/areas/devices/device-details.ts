/**
 * The published device record carries inventory facts Fleetbook never changes (make,
 * location, contact, warranty...). They are drawn once per device from the device's own
 * rng fork, so the same seed and serial number give the same facts. Only the draws are kept
 * (`DeviceFacts`, a few numbers and two ids); the record's facts are built from them when a
 * device is read: 50,000 devices held ~190 MB of built facts.
 */
import type { Rng } from '../../context.js';

export type DeviceCategory = 'COMPUTE' | 'STORAGE' | 'NETWORK';

/** Published `deviceType` values per category (the category is what a playbook adds by). */
export const DEVICE_TYPES: Record<DeviceCategory, readonly string[]> = {
  COMPUTE: ['COMPUTE'],
  STORAGE: ['STORAGE'],
  NETWORK: ['SWITCH', 'AP', 'GATEWAY'],
};

const MAKES: Record<DeviceCategory, string> = {
  COMPUTE: 'Platform Compute',
  STORAGE: 'Platform Storage',
  NETWORK: 'Platform Networking',
};

const SITES = [
  {
    city: 'Berlin',
    state: 'BE',
    country: 'Germany',
    postalCode: '10115',
    streetAddress: 'Invalidenstrasse 12',
    latitude: 52.53,
    longitude: 13.38,
  },
  {
    city: 'Lyon',
    state: 'ARA',
    country: 'France',
    postalCode: '69002',
    streetAddress: '4 Rue de la Republique',
    latitude: 45.76,
    longitude: 4.84,
  },
  {
    city: 'Austin',
    state: 'TX',
    country: 'United States',
    postalCode: '78701',
    streetAddress: '301 Congress Ave',
    latitude: 30.27,
    longitude: -97.74,
  },
  {
    city: 'Osaka',
    state: 'Osaka',
    country: 'Japan',
    postalCode: '530-0001',
    streetAddress: '2-4-9 Umeda',
    latitude: 34.7,
    longitude: 135.5,
  },
] as const;

const CONTACTS = [
  { firstName: 'Dana', lastName: 'Weber', email: 'dana.weber@example.com', phoneNumber: '+49 30 1234567' },
  { firstName: 'Luis', lastName: 'Moreno', email: 'luis.moreno@example.com', phoneNumber: '+1 512 555 0147' },
] as const;

const SUPPORT = [
  { contractLevel: 'Foundation Care 24x7', serviceLevel: '4 hour onsite', contractLevelRank: 2, serviceLevelRank: 2 },
  {
    contractLevel: 'Foundation Care NBD',
    serviceLevel: 'Next business day',
    contractLevelRank: 1,
    serviceLevelRank: 1,
  },
] as const;

/** Fields of a device's published record that no Fleetbook operation changes. */
export interface DeviceDetails {
  make: string;
  deviceName: string;
  secondaryName: string;
  manufacturedDate: string;
  archived: boolean;
  isFlex: boolean;
  ownership: 'MANAGED';
  source: 'MANAGED';
  billingAccountId: string;
  billingAccountName: string;
  billingTier: string;
  subscriptionCategory: string;
  location: Record<string, unknown>;
  contact: Record<string, unknown>;
  warranty: Record<string, unknown>;
}

function isoDaysBefore(anchorIso: string, days: number): string {
  return new Date(Date.parse(anchorIso) - days * 86_400_000).toISOString();
}

/** What a device's inventory facts are drawn from. */
export interface DeviceFacts {
  site: number;
  contact: number;
  support: number;
  manufacturedDaysAgo: number;
  warrantyDaysAgo: number;
  locationId: string;
  contactId: string;
  rack: number;
  billingAccount: number;
}

/** The draws of a device's facts, in the order they have always been drawn (the same seed gives the same facts). */
export function drawDeviceFacts(rng: Rng): DeviceFacts {
  const site = rng.int(0, SITES.length - 1);
  const contact = rng.int(0, CONTACTS.length - 1);
  const support = rng.int(0, SUPPORT.length - 1);
  const manufacturedDaysAgo = rng.int(30, 400);
  const warrantyDaysAgo = rng.int(0, 20);
  const locationId = rng.uuid();
  const contactId = rng.uuid();
  const rack = rng.int(1, 40);
  const billingAccount = rng.int(100_000, 999_999);
  return { site, contact, support, manufacturedDaysAgo, warrantyDaysAgo, locationId, contactId, rack, billingAccount };
}

/** A device's inventory facts as its record shows them. */
export function deviceDetails(
  facts: DeviceFacts,
  category: DeviceCategory,
  serialNumber: string,
  createdAt: string,
): DeviceDetails {
  const site = SITES[facts.site]!;
  const warrantyStart = isoDaysBefore(createdAt, facts.warrantyDaysAgo);
  const warrantyEnd = new Date(Date.parse(warrantyStart) + 3 * 365 * 86_400_000).toISOString();
  const level = { ...SUPPORT[facts.support]!, startDate: warrantyStart, endDate: warrantyEnd };
  const { locationId, contactId } = facts;
  return {
    make: MAKES[category],
    deviceName: `${category.toLowerCase()}-${serialNumber.toLowerCase()}`,
    secondaryName: `${site.city} rack ${facts.rack}`,
    manufacturedDate: isoDaysBefore(createdAt, facts.manufacturedDaysAgo),
    archived: false,
    isFlex: false,
    ownership: 'MANAGED',
    source: 'MANAGED',
    billingAccountId: `BA-${facts.billingAccount}`,
    billingAccountName: `${site.country} operations`,
    billingTier: 'STANDARD',
    subscriptionCategory: category,
    location: {
      id: locationId,
      resourceUri: `/locations/v1/locations/${locationId}`,
      locationName: `${site.city} data centre`,
      locationSource: 'MANUAL',
      ...site,
    },
    contact: {
      id: contactId,
      resourceUri: `/identity/v1/users/${contactId}`,
      type: 'WORKSPACE-USER',
      ...CONTACTS[facts.contact]!,
    },
    warranty: { country: site.country, currentSupportLevel: level, supportLevels: [level] },
  };
}
