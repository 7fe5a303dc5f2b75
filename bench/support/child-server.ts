import { fork, type ChildProcess } from 'node:child_process';
import type { CleanupScope } from './cleanup.ts';

/** What a server child sends over IPC once it listens (see bench/support/servers.ts). */
export interface ListeningMessage {
  type: 'listening';
  url: string;
  [key: string]: unknown;
}

export interface ChildServer {
  url: string;
  pid: number;
  info: ListeningMessage;
  /** Stops the child (SIGTERM, then SIGKILL after a grace period); idempotent. */
  stop(): Promise<void>;
}

function isListening(message: unknown): message is ListeningMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'listening';
}

/**
 * Forks `entry` (a TypeScript file run through tsx) and waits for its "listening" message.
 * The child exits when the IPC channel closes, so it never outlives the benchmark process,
 * even if that one is killed.
 */
export async function startChildServer(options: {
  entry: string;
  args?: string[];
  env: NodeJS.ProcessEnv;
  scope: CleanupScope;
  label: string;
  startTimeoutMs?: number;
}): Promise<ChildServer> {
  const child: ChildProcess = fork(options.entry, options.args ?? [], {
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROF] : []),
    ],
    env: options.env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });

  const stop = stopperOf(child);
  options.scope.defer(`stop ${options.label} (pid ${child.pid})`, stop);

  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const info = await new Promise<ListeningMessage>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${options.label} did not start within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const onMessage = (message: unknown) => {
      if (isListening(message)) done(() => resolve(message));
      else if (typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'error') {
        fail(new Error(`${options.label} failed to start: ${String((message as { message?: unknown }).message)}`));
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(new Error(`${options.label} exited before listening (code ${code}, signal ${signal})`));
    const onError = (error: Error) => fail(error);
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage).off('exit', onExit).off('error', onError);
      settle();
    };
    const fail = (error: Error) => done(() => reject(error));
    child.on('message', onMessage).once('exit', onExit).once('error', onError);
  });

  return { url: info.url, pid: child.pid!, info, stop };
}

/** Stops a child once (later calls wait for the first): SIGTERM, then SIGKILL after 5 s. */
export function stopperOf(child: ChildProcess): () => Promise<void> {
  let stopped: Promise<void> | undefined;
  return () => {
    stopped ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
    return stopped;
  };
}
