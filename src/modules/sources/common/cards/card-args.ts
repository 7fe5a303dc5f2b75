import { Type } from '@sinclair/typebox';
import type { ArgError } from '../../kit/source.ts';

/** The `bins` arg both card sources take: issuer prefixes, kept as strings for their leading zeros. */
export const binsArg = (example: string[]) =>
  Type.Array(Type.String(), {
    description: 'Issuer BINs: the first 6 to 8 digits of the card numbers to watch',
    examples: [example],
  });

const BIN = /^\d{6,8}$/;

/** Each BIN must be 6 to 8 digits. */
export function binsErrors(bins: string[] = []): ArgError[] {
  return bins.flatMap((bin, index) =>
    BIN.test(bin) ? [] : [{ field: `args.bins[${index}]`, message: 'must be 6 to 8 digits', rule: 3 as const }],
  );
}
