import type { Tlp } from '../exported-hits.ts';

/** The TLP 2.0 extension for STIX 2.1 marking definitions (OASIS, FIRST TLP 2.0). */
const TLP_2_0_EXTENSION = 'extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d';

// The official TLP 2.0 marking definitions: fixed ids every platform knows (OpenCTI, MISP map
// them to their own TLP markings), so an export never defines a TLP of its own.
const IDS: Record<Tlp, string> = {
  clear: 'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487',
  green: 'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  amber: 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'amber+strict': 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
  red: 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
};

export const tlpMarkingId = (tlp: Tlp): string => IDS[tlp];

/** The five marking definitions as the TLP 2.0 extension publishes them. */
export const TLP_MARKINGS: { type: string; id: string; [property: string]: unknown }[] = (
  Object.entries(IDS) as [Tlp, string][]
).map(([tlp, id]) => ({
  type: 'marking-definition',
  spec_version: '2.1',
  id,
  created: '2022-10-01T00:00:00.000Z',
  name: `TLP:${tlp.toUpperCase()}`,
  extensions: { [TLP_2_0_EXTENSION]: { extension_type: 'property-extension', tlp_2_0: tlp } },
}));
