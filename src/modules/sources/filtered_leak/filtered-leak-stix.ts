import type { StixDescription } from '../kit/source.ts';
import { credentialDescription, str } from '../common/stix/stix-kit.ts';

/** A leaked credential: the account, its email, the login URL; that a password exists, never it. */
export const filteredLeakStix = (data: Record<string, unknown>): StixDescription =>
  credentialDescription(data, [str(data.leak_name), str(data.leak_type)].filter(Boolean).join(', '));
