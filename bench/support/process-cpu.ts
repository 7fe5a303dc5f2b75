import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU seconds of a process so far (Linux /proc; NaN elsewhere or once it is gone). */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds of this process so far. */
export const ownCpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/** The PostgreSQL backends serving `database` now: their process title names it. */
function backendsOf(database: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.split(' ').includes(database)) pids.push(Number(entry));
    } catch {
      // gone between the listing and the read
    }
  }
  return pids;
}

/**
 * The CPU time PostgreSQL spends for one database while some work runs: its backends are
 * sampled every `everyMs` (a backend ends with its client, and /proc forgets it), so a backend's
 * last moments before it ends, up to `everyMs`, are missed. The server's own processes (WAL
 * writer, checkpointer) are shared with every database and not counted.
 */
export function sampleBackendCpu(database: string, everyMs = 100) {
  const baseline = new Map<number, number>();
  const latest = new Map<number, number>();
  const sample = (first: boolean) => {
    for (const pid of backendsOf(database)) {
      const seconds = cpuSecondsOf(pid);
      if (!Number.isFinite(seconds)) continue;
      // A backend seen for the first time after the start was forked during the work, from zero.
      if (!baseline.has(pid)) baseline.set(pid, first ? seconds : 0);
      latest.set(pid, seconds);
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), everyMs);
  return {
    /** Stops sampling; the CPU seconds the database's backends used since the start. */
    stop(): number {
      clearInterval(timer);
      sample(false);
      let total = 0;
      for (const [pid, seconds] of latest) total += seconds - baseline.get(pid)!;
      return total;
    },
  };
}
