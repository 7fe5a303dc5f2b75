import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './cli.ts';
import { scaled } from './wait.ts';

export interface ServerProcess {
  child: ChildProcess;
  /** http://host:port as the server announced it. */
  baseUrl: string;
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code and signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export type WorkerProcess = Omit<ServerProcess, 'baseUrl'>;

/**
 * Spawns `command args` with the environment and waits until its standard output matches
 * `ready`; returns the process and the match.
 */
async function spawnUntilReady(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs: number,
) {
  // Every server and worker a test starts ends on an unhandled rejection, so no test can pass
  // while a background task's failure goes unhandled.
  const nodeOptions = [process.env.NODE_OPTIONS, '--unhandled-rejections=strict', env.NODE_OPTIONS]
    .filter(Boolean)
    .join(' ');
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, DRAGNET_LOG_LEVEL: 'warn', ...env, NODE_OPTIONS: nodeOptions },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no line matching ${ready} within ${timeoutMs} ms`), timeoutMs);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.stdout!.off('data', check);
      if (child.exitCode === null) child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start: ${why}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    };
    const check = () => {
      const found = ready.exec(stdout);
      if (!found) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve(found);
    };
    child.stdout!.on('data', check);
    void exited.then(({ code, signal }) => fail(`exited with ${code ?? signal}`));
  });

  return { process: { child, exited, output: () => ({ stdout, stderr }) }, match };
}

/**
 * Starts the server the way the README says (`npm start`, i.e. the package's start script) with
 * the given environment and waits for its "Dragnet is listening on …" line. `extraArgs` go after
 * the script's own (`--no-worker` for an API-only process).
 */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = scaled(60_000),
  extraArgs: string[] = [],
): Promise<ServerProcess> {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [command, ...scriptArgs] = pkg.scripts.start.split(/\s+/);
  const { process: started, match } = await spawnUntilReady(
    command === 'node' ? process.execPath : command!,
    [...scriptArgs, ...extraArgs],
    env,
    /Dragnet is listening on (http:\/\/\S+)/,
    timeoutMs,
  );
  return { ...started, baseUrl: match[1]! };
}

/** Starts `dragnet worker` and waits for its "Dragnet worker running" line. */
export async function startWorker(env: Record<string, string>, timeoutMs = scaled(60_000)): Promise<WorkerProcess> {
  return (
    await spawnUntilReady(process.execPath, ['bin/dragnet.js', 'worker'], env, /Dragnet worker running/, timeoutMs)
  ).process;
}

/** Kills a server a test started (if it is still running) and waits for it to end. */
export async function killServer(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await server.exited;
}
