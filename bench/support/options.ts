import { InvalidArgumentError, type Command } from 'commander';

/** A commander parser for a positive number (optionally whole) up to `max`. */
export const positive = (label: string, integer: boolean, max: number) => (raw: string) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)) || value > max) {
    throw new InvalidArgumentError(`${label} must be a ${integer ? 'whole ' : ''}number above 0 and at most ${max}`);
  }
  return value;
};

/**
 * --duration, --slice and --warmup of a benchmark whose `unit`s (servers, configurations) take
 * turns under load in short slices (bench/support/load.ts loadSlice).
 */
export const withSliceOptions = (command: Command, unit: string): Command =>
  command
    .option('--duration <seconds>', `measured load per ${unit}, in slices`, positive('--duration', false, 600), 20)
    .option(
      '--slice <seconds>',
      `length of one slice; the ${unit}s take turns slice by slice`,
      positive('--slice', false, 60),
      2,
    )
    .option('--warmup <seconds>', `unmeasured load per ${unit} before measuring`, positive('--warmup', false, 600), 3);
