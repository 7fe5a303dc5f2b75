/**
 * The organization's account-wide cap is 25 requests per second (spec 8.1) and a page that
 * draws several sections, or a mutation that refreshes them, can ask for more at once: the
 * dashboard then met 429s of its own making. Requests of one tab start at most `perSecond` in
 * any second (a sliding window); the others wait their turn, in order. Other clients of the
 * organization still count against the same cap, which is why a short 429 is retried too.
 */
export function createPacer(perSecond: number, now: () => number = () => performance.now()) {
  const started: number[] = [];
  let last: Promise<void> = Promise.resolve();
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  return function nextTurn(): Promise<void> {
    last = last.then(async () => {
      for (;;) {
        const at = now();
        while (started.length > 0 && at - started[0]! >= 1000) started.shift();
        if (started.length < perSecond) {
          started.push(at);
          return;
        }
        await wait(1000 - (at - started[0]!));
      }
    });
    return last;
  };
}
