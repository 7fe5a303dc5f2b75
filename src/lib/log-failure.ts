/**
 * The failure of background work that nothing awaits (a delivery, a notification's status), for
 * the operator: one line on stderr, beside the worker's other messages. Modules below the
 * composition root have no logger of their own; the caller has already swallowed the error.
 */
export function logFailure(what: string, error: unknown): void {
  process.stderr.write(`${what}: ${error instanceof Error ? error.message : String(error)}\n`);
}
