import type { MaybePromise } from '../../../lib/maybe-promise.ts';

/**
 * Where rate-limit counts live. A reservation is all-or-nothing: either every bucket is below
 * its limit and all are incremented, or none is and the first full bucket is named.
 */
export interface CounterSlot {
  key: string;
  limit: number;
  /** Epoch ms after which the count is useless (the window's end). */
  expiresAt: number;
}

export type ReserveOutcome = { ok: true; counts: number[] } | { ok: false; index: number; count: number };

export interface CounterStore {
  /** Synchronous where the counts are in this process (the embedded store). */
  reserve(slots: CounterSlot[]): MaybePromise<ReserveOutcome>;
  /** Gives back one unit of each slot a reservation took (never below zero). */
  release(slots: CounterSlot[]): Promise<void>;
  read(keys: string[]): Promise<number[]>;
  close(): Promise<void>;
}
