import type { StixDescription } from '../kit/source.ts';
import { credentialDescription } from '../common/stix/stix-kit.ts';

/** A distinct credential: the account, its email, the login URL; that a password exists, never it. */
export const distinctLeakStix = (data: Record<string, unknown>): StixDescription =>
  credentialDescription(data, `seen in ${String(data.occurrences ?? 1)} leak(s)`);
