import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './cli.ts';

export interface ServerProcess {
  child: ChildProcess;
  /** http://host:port as the server announced it. */
  baseUrl: string;
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code and signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the server the way the README says (`npm start`, i.e. the package's start script) with
 * the given environment and waits for its "Dragnet is listening on …" line. `extraArgs` go after
 * the script's own (`--no-worker` for an API-only process).
 */
export async function startServer(env: Record<string, string>, timeoutMs = 60_000, extraArgs: string[] = []): Promise<ServerProcess> {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [command, ...scriptArgs] = pkg.scripts.start.split(/\s+/);
  const args = [...scriptArgs, ...extraArgs];
  const child = spawn(command === 'node' ? process.execPath : command!, args, {
    cwd: repoRoot,
    env: { ...process.env, DRAGNET_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(`no "listening" line within ${timeoutMs} ms`), timeoutMs);
    const fail = (why: string) => {
      clearTimeout(timer);
      child.stdout!.off('data', check);
      if (child.exitCode === null) child.kill('SIGKILL');
      reject(new Error(`server did not start: ${why}\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    };
    const check = () => {
      const match = /Dragnet is listening on (http:\/\/\S+)/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', check);
      resolve(match[1]!);
    };
    child.stdout!.on('data', check);
    void exited.then(({ code, signal }) => fail(`exited with ${code ?? signal}`));
  });

  return { child, baseUrl, exited, output: () => ({ stdout, stderr }) };
}
