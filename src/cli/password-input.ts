import { AppError } from '../lib/errors.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** --password, else --password-stdin, else a hidden prompt when a person is at a terminal. */
export async function resolvePassword(options: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (options.password !== undefined) return options.password;
  if (options.passwordStdin) return readStdin();
  if (process.stdin.isTTY) {
    // The prompt library is loaded only when a person is asked: it is slow to load.
    const { default: password } = await import('@inquirer/password');
    const first = await password({ message: 'Password', mask: '*' });
    const second = await password({ message: 'Repeat password', mask: '*' });
    if (first !== second) throw new AppError('validation_failed', 'the two passwords differ');
    return first;
  }
  throw new AppError('validation_failed', 'no password given: use --password, --password-stdin or run in a terminal');
}
