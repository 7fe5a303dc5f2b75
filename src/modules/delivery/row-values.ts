/** Stored column values as the API shows them. */
export { isoDate as iso } from '../../lib/iso-date.ts';
export const bool = (value: number) => Number(value) === 1;
