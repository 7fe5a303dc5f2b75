import type { ArgError } from '../../kit/args-validation.ts';
import type { ArgParam } from '../../kit/source.ts';

/** The `bins` param both card sources take: issuer prefixes, kept as strings for their leading zeros. */
export const binsParam = (options: { required: boolean; example: string[] }): ArgParam => ({
  name: 'bins',
  type: 'Array[String]',
  required: options.required,
  hint: 'Issuer BINs: the first 6 to 8 digits of the card numbers to watch',
  example: options.example,
});

const BIN = /^\d{6,8}$/;

/** Each BIN must be 6 to 8 digits; runs after the declared types held, so `bins` is absent or strings. */
export function binsErrors(args: Record<string, unknown>): ArgError[] {
  const bins = (args.bins as string[] | undefined) ?? [];
  return bins.flatMap((bin, index) => (BIN.test(bin) ? [] : [{ field: `args.bins[${index}]`, message: 'must be 6 to 8 digits', rule: 3 as const }]));
}
