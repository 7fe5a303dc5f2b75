/** Where work that no request waits for reports: a failure is logged there, never thrown. */
export type Log = (message: string, error?: unknown) => void;

/** The log of `dragnet` commands without the server's JSON log: standard error, one line each. */
export const stderrLog: Log = (message, error) => {
  process.stderr.write(`${message}${error === undefined ? '' : `: ${error instanceof Error ? error.message : String(error)}`}\n`);
};
