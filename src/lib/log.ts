/** Where work that no request waits for reports: a failure is logged there, never thrown. */
export type Log = (message: string, error?: unknown) => void;

/** The log of `dragnet` commands without the server's JSON log: standard error, one line each. */
export const stderrLog: Log = (message, error) => {
  process.stderr.write(
    `${message}${error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`}\n`,
  );
};

/**
 * Work that runs after the request it follows has answered (ANALYZE after an ingest, the email
 * of test_email): its failure is logged and never becomes the outcome of that request, nor an
 * unhandled rejection. `settle()` waits until nothing is running, tasks started meanwhile
 * included, so that a process closes its store only after (the CLI ingest's ANALYZE still ends).
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
      while (running.size) await Promise.all(running);
    },
  };
}

export type BackgroundTasks = ReturnType<typeof createBackgroundTasks>;
