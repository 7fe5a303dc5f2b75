import { InvalidArgumentError } from 'commander';

export const wholeNumber = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
};
