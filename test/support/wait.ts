/**
 * Time in tests. A test waits for a condition, never for a fixed time, and every deadline it
 * gives (a wait's, a child process's, vitest's per-test timeout) is a ceiling for a machine in
 * trouble, not an estimate: passing tests never reach it. DRAGNET_TEST_TIME_SCALE multiplies
 * them all for a machine slower than a busy 2-core one (`DRAGNET_TEST_TIME_SCALE=3 npm test`),
 * so no outcome depends on how loaded the machine is. A duration is scaled once, where it is
 * written (`const CLI_TEST_MS = scaled(180_000)`); helpers scale only their own defaults.
 */
export const TIME_SCALE = timeScale(process.env.DRAGNET_TEST_TIME_SCALE);

function timeScale(setting: string | undefined): number {
  if (setting === undefined || setting === '') return 1;
  const scale = Number(setting);
  if (!Number.isFinite(scale) || scale <= 0)
    throw new Error(`DRAGNET_TEST_TIME_SCALE must be a positive number, not ${JSON.stringify(setting)}`);
  return scale;
}

/** A deadline of `ms` on a quiet machine, stretched by DRAGNET_TEST_TIME_SCALE. */
export const scaled = (ms: number): number => Math.round(ms * TIME_SCALE);

export interface WaitOptions {
  /** Already scaled, as every duration a test passes (`scaled(120_000)`). */
  timeoutMs?: number;
  everyMs?: number;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `probe` every `everyMs` until it returns a truthy value, and returns that value. Rejects
 * naming `what` once the deadline (20 s scaled by default) has passed.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  { timeoutMs = scaled(20_000), everyMs = 20 }: WaitOptions = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
