/** Time is an adapter so the scheduler, token expiry and windows can be tested without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The clock's time in epoch milliseconds: the system clock's without a Date (per-request paths). */
export const epochMs = (clock: Clock): number => (clock === systemClock ? Date.now() : clock.now().getTime());

export interface ManualClock extends Clock {
  set(at: Date | string): void;
  advance(milliseconds: number): void;
}

export function createManualClock(start: Date | string = '2026-01-15T12:00:00Z'): ManualClock {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at).getTime();
    },
    advance: (milliseconds) => {
      current += milliseconds;
    },
  };
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
