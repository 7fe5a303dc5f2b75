import { useSyncExternalStore } from 'react';

/**
 * Whether the dashboard shows times in the reader's local time or in UTC (usage windows and the
 * API's timestamps are UTC). Kept in this browser's localStorage; every tab follows a change.
 */
export type TimeZoneChoice = 'local' | 'utc';

const KEY = 'dragnet.timeZone';
const listeners = new Set<() => void>();

export function timeZoneChoice(): TimeZoneChoice {
  return localStorage.getItem(KEY) === 'utc' ? 'utc' : 'local';
}

export function setTimeZoneChoice(choice: TimeZoneChoice): void {
  localStorage.setItem(KEY, choice);
  listeners.forEach((listener) => listener());
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  const fromOtherTab = (event: StorageEvent) => {
    if (event.key === KEY || event.key === null) listener();
  };
  window.addEventListener('storage', fromOtherTab);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', fromOtherTab);
  };
}

export function useTimeZoneChoice(): TimeZoneChoice {
  return useSyncExternalStore(subscribe, timeZoneChoice);
}
