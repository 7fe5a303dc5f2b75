import { spawn, type ChildProcess } from 'node:child_process';
import { repoRoot, type CliResult } from './cli.ts';
import { scaled } from './wait.ts';

export interface CliProcess {
  child: ChildProcess;
  /** Output so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves when the process has ended (killed ones too): its exit code (null if signalled) and signal. */
  done: Promise<CliResult & { signal: NodeJS.Signals | null }>;
}

/**
 * Starts the real `dragnet` command (`node bin/dragnet.js …`) and hands back the child, for
 * tests that run several at once or kill one part-way (test/support/cli.ts `runCli` waits for
 * the end instead). The process is SIGKILLed after `timeoutMs`.
 */
export function spawnCli(args: string[], options: { env: Record<string, string>; timeoutMs?: number }): CliProcess {
  const child = spawn(process.execPath, ['bin/dragnet.js', ...args], {
    cwd: repoRoot,
    env: { ...process.env, DRAGNET_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? scaled(90_000));
  const done = new Promise<CliResult & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, signal, stdout, stderr });
    });
  });
  return { child, done, output: () => ({ stdout, stderr }) };
}

/** The JSON summary `dragnet --json rules tick` prints. */
export interface TickSummary {
  at: string;
  due: number;
  ran: number;
  skipped: number;
  matches: number;
  jobs_run: number;
  notifications_handled: number;
}

/** `dragnet --json rules tick --at <iso>` as a child process. */
export const spawnTick = (at: Date, env: Record<string, string>, timeoutMs?: number) =>
  spawnCli(['--json', 'rules', 'tick', '--at', at.toISOString()], { env, timeoutMs });

/** Waits for a tick process and returns its summary; fails with its output unless it exited 0. */
export async function tickSummary(process: CliProcess): Promise<TickSummary> {
  const result = await process.done;
  if (result.code !== 0)
    throw new Error(
      `rules tick exited ${result.code ?? result.signal}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`,
    );
  return JSON.parse(result.stdout) as TickSummary;
}
