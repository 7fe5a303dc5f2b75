/** Spec 3.4: a rule's frequencies, slowest last, with how often each runs. */
export const FREQUENCIES = [
  { value: 'daily', label: 'Daily', hours: 24 },
  { value: 'twice_weekly', label: 'Twice a week (every 3–4 days)', hours: 84 },
  { value: 'weekly', label: 'Weekly', hours: 168 },
  { value: 'biweekly', label: 'Every 2 weeks', hours: 336 },
  { value: 'twice_monthly', label: 'Twice a month', hours: 360 },
  { value: 'monthly', label: 'Monthly', hours: 720 },
] as const;

export type Frequency = (typeof FREQUENCIES)[number]['value'];

export const frequencyLabel = (value: string) => FREQUENCIES.find((entry) => entry.value === value)?.label ?? value;

/**
 * Whether a rule may ask for `frequency` of a source whose floor is `floor` (spec 2.10 rule 7:
 * nothing faster than the source's own cadence).
 */
export function allowedFrequency(frequency: string, floor: string): boolean {
  const hours = (value: string) => FREQUENCIES.find((entry) => entry.value === value)?.hours ?? 0;
  return hours(frequency) >= hours(floor);
}
