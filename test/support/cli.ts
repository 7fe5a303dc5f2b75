import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaled } from './wait.ts';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `dragnet` command (`node bin/dragnet.js …`) in a child process with the given
 * store environment. `input` is written to its standard input, which is then closed.
 */
export function runCli(
  args: string[],
  options: { env: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['bin/dragnet.js', ...args],
      {
        cwd: repoRoot,
        env: { ...process.env, DRAGNET_LOG_LEVEL: 'warn', ...options.env },
        timeout: options.timeoutMs ?? scaled(60_000),
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(new Error(`dragnet ${args.join(' ')} did not finish: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

/** `dragnet user create --org <org> --email <email> --password-stdin`, which must succeed. */
export async function createUserByCli(
  env: Record<string, string>,
  user: { org: string; email: string; password: string },
): Promise<void> {
  const created = await runCli(['user', 'create', '--org', user.org, '--email', user.email, '--password-stdin'], {
    env,
    input: `${user.password}\n`,
  });
  if (created.code !== 0) throw new Error(`user create ${user.email} exited ${created.code}: ${created.stderr}`);
}
