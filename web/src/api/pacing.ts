/** Where the start times of the browser's recent requests are kept, shared by its tabs. */
const STARTS_KEY = 'dragnet.request-starts';
const WINDOW_MS = 1000;

/**
 * The organization's account-wide cap is 25 requests per second (spec 8.1) and a page that
 * draws several sections, or a mutation that refreshes them, can ask for more at once: the
 * dashboard then met 429s of its own making. Requests start at most `perSecond` in any second
 * (a sliding window); the others wait their turn, in order. The window is kept in `storage`
 * (localStorage), so a reload, a new page load or another tab of this browser counts in it too;
 * tabs can still race each other for the last slot, and other clients of the organization count
 * against the same cap, which is why a short 429 is retried as well.
 */
export function createPacer(
  perSecond: number,
  options: { now?: () => number; storage?: Pick<Storage, 'getItem' | 'setItem'> | null } = {},
) {
  const now = options.now ?? (() => Date.now());
  const storage = options.storage === undefined ? sharedStorage() : options.storage;
  let ownStarts: number[] = [];
  const recentStarts = (at: number): number[] => {
    let starts = ownStarts;
    try {
      const saved: unknown = JSON.parse(storage?.getItem(STARTS_KEY) ?? 'null');
      if (Array.isArray(saved)) starts = saved.filter((value): value is number => typeof value === 'number');
    } catch {
      // A store another version wrote, or none: this tab's own starts still count.
    }
    return starts.filter((start) => at - start < WINDOW_MS && start <= at).sort((a, b) => a - b);
  };
  const keep = (starts: number[]) => {
    ownStarts = starts;
    try {
      storage?.setItem(STARTS_KEY, JSON.stringify(starts));
    } catch {
      // Storage full or refused (private mode): the tab paces itself alone.
    }
  };
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  let last: Promise<void> = Promise.resolve();
  return function nextTurn(): Promise<void> {
    last = last.then(async () => {
      for (;;) {
        const at = now();
        const starts = recentStarts(at);
        if (starts.length < perSecond) {
          keep([...starts, at]);
          return;
        }
        await wait(WINDOW_MS - (at - starts[starts.length - perSecond]!));
      }
    });
    return last;
  };
}

function sharedStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}
