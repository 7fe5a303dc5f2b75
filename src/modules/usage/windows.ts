/** Calendar-aligned UTC windows (spec 8.1.3): a second, a UTC day, a calendar month. */
export type Period = 'second' | 'day' | 'month';

export const periods: Period[] = ['second', 'day', 'month'];

export const periodLabels: Record<Period, string> = { second: '1 Second', day: '1 Day', month: '1 Month' };

export interface Window {
  start: number;
  end: number;
}

function windowOf(period: Period, now: Date): Window {
  const ms = now.getTime();
  switch (period) {
    case 'second': {
      const start = ms - (ms % 1000);
      return { start, end: start + 1000 };
    }
    case 'day': {
      const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      return { start, end: start + 86_400_000 };
    }
    case 'month': {
      const year = now.getUTCFullYear();
      const month = now.getUTCMonth();
      return { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
    }
  }
}

/** Whole seconds until the window resets, never 0 while it is still open. */
export const secondsUntil = (end: number, now: Date): number => Math.max(1, Math.ceil((end - now.getTime()) / 1000));

const latestWindows = new Map<Period, Readonly<Window>>();

/**
 * The window of `period` containing the instant `ms`. Every request asks for the same few
 * windows, so the latest one of each period is reused while it lasts (windows never change).
 */
export function windowAt(period: Period, ms: number): Readonly<Window> {
  const latest = latestWindows.get(period);
  if (latest && latest.start <= ms && ms < latest.end) return latest;
  const window = Object.freeze(windowOf(period, new Date(ms)));
  latestWindows.set(period, window);
  return window;
}
