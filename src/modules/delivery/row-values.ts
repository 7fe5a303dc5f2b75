/** Stored column values as the API shows them. */
export const iso = (ms: number) => new Date(Number(ms)).toISOString();
export const bool = (value: number) => Number(value) === 1;
