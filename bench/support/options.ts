import { InvalidArgumentError } from 'commander';

/** A commander parser for a positive number (optionally whole) up to `max`. */
export const positive = (label: string, integer: boolean, max: number) => (raw: string) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)) || value > max) {
    throw new InvalidArgumentError(`${label} must be a ${integer ? 'whole ' : ''}number above 0 and at most ${max}`);
  }
  return value;
};
