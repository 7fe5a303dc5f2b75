/** Where work that no request waits for reports: a failure is logged there, never thrown. */
export type Log = (message: string, error?: unknown) => void;

/** The log of `dragnet` commands without the server's JSON log: standard error, one line each. */
export const stderrLog: Log = (message, error) => {
  process.stderr.write(`${message}${error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`}\n`);
};

/**
 * Upkeep that runs after the work it follows has answered (ANALYZE after an ingest): its failure
 * is logged and never becomes the outcome of that work. `settle()` waits for what is still
 * running, so that a process closes its store only after (the CLI ingest's ANALYZE still ends).
 */
export function createBackgroundTasks(log: Log) {
  const running = new Set<Promise<void>>();
  return {
    run(name: string, task: () => Promise<unknown>): void {
      const done: Promise<void> = task()
        .then(
          () => undefined,
          (error: unknown) => log(`${name} failed`, error),
        )
        .finally(() => running.delete(done));
      running.add(done);
    },
    async settle(): Promise<void> {
      await Promise.all(running);
    },
  };
}

export type BackgroundTasks = ReturnType<typeof createBackgroundTasks>;
