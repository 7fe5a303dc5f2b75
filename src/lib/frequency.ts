/** Spec 3.4: rule frequencies and the hours between runs. */
export const frequencyHours = {
  daily: 24,
  twice_weekly: 84,
  weekly: 168,
  biweekly: 336,
  twice_monthly: 360,
  monthly: 720,
} as const;

export type Frequency = keyof typeof frequencyHours;

export const frequencies = Object.keys(frequencyHours) as Frequency[];

export const isFrequency = (value: string): value is Frequency => Object.hasOwn(frequencyHours, value);
