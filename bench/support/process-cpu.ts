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

/**
 * The CPU time PostgreSQL spends for one database while some work runs: its backends are
 * sampled every `everyMs` (a backend ends with its client, and /proc forgets it), so a backend's
 * last moments before it ends, up to `everyMs`, are missed. The server's own processes (WAL
 * writer, checkpointer) are shared with every database and not counted. A process's title is
 * read once, so a sample costs a listing of /proc and the backends' stat files; what sampling
 * costs this process is kept apart (`ownCpu`), for work measured in this process.
 */
export function sampleBackendCpu(database: string, everyMs = 100) {
  const baseline = new Map<number, number>();
  const latest = new Map<number, number>();
  const others = new Set<number>();
  let ownCpu = 0;
  const isBackend = (pid: number) => {
    if (baseline.has(pid)) return true;
    if (others.has(pid)) return false;
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.split(' ').includes(database)) return true;
    } catch {
      // gone between the listing and the read
    }
    others.add(pid);
    return false;
  };
  const sample = (first: boolean) => {
    const started = ownCpuSeconds();
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || !isBackend(pid)) continue;
      const seconds = cpuSecondsOf(pid);
      if (!Number.isFinite(seconds)) continue;
      // A backend seen for the first time after the start was forked during the work, from zero.
      if (!baseline.has(pid)) baseline.set(pid, first ? seconds : 0);
      latest.set(pid, seconds);
    }
    ownCpu += ownCpuSeconds() - started;
  };
  const used = () => {
    let total = 0;
    for (const [pid, seconds] of latest) total += seconds - baseline.get(pid)!;
    return total;
  };
  sample(true);
  const timer = setInterval(() => sample(false), everyMs);
  return {
    /** CPU seconds this process spent sampling so far. */
    ownCpu: () => ownCpu,
    /** The CPU seconds the database's backends used since the start, as of the last sample. */
    used,
    /** Stops sampling; the CPU seconds the database's backends used since the start. */
    stop(): number {
      clearInterval(timer);
      sample(false);
      return used();
    },
  };
}
