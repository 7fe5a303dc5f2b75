/**
 * Cleanup that also runs when the benchmark fails or is interrupted: a benchmark opens a
 * CleanupScope, defers the undo of everything it creates (child processes, temp dirs,
 * databases) and closes the scope in `finally`. bench/run.ts closes every scope still open
 * on SIGINT/SIGTERM before it exits.
 */
const openScopes = new Set<CleanupScope>();

export class CleanupScope {
  private readonly steps: Array<{ label: string; fn: () => unknown }> = [];
  private closing: Promise<void> | undefined;

  constructor() {
    openScopes.add(this);
  }

  /** Registers an undo step; steps run last-in first-out. */
  defer(label: string, fn: () => unknown): void {
    this.steps.push({ label, fn });
  }

  /** Runs every step once (later calls wait for the first); a failing step does not stop the rest. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop()!;
        try {
          await step.fn();
        } catch (error) {
          process.stderr.write(
            `cleanup: ${step.label} failed: ${error instanceof Error ? error.message : String(error)}\n`,
          );
        }
      }
      openScopes.delete(this);
    })();
    return this.closing;
  }
}

/** Closes every open scope (for signal handlers); bounded so a stuck step cannot hang the exit. */
export async function closeAllScopes(timeoutMs = 10_000): Promise<void> {
  const all = Promise.all([...openScopes].map((scope) => scope.close()));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([all, timeout]);
  clearTimeout(timer);
}
