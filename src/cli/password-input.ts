import { readFileSync } from 'node:fs';
import type { BackupKey } from '../db/backup-encryption.ts';
import { AppError } from '../lib/errors.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** --password, else --password-stdin, else a hidden prompt when a person is at a terminal. */
export async function resolvePassword(options: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (options.password !== undefined) return options.password;
  if (options.passwordStdin) return readStdin();
  if (process.stdin.isTTY) return prompt('password', { confirm: true });
  throw new AppError('validation_failed', 'no password given: use --password, --password-stdin or run in a terminal');
}

/** A hidden prompt; with `confirm`, asked twice. */
async function prompt(what: string, options: { confirm: boolean }): Promise<string> {
  // The prompt library is loaded only when a person is asked: it is slow to load.
  const { default: password } = await import('@inquirer/password');
  const first = await password({ message: what[0]!.toUpperCase() + what.slice(1), mask: '*' });
  if (!options.confirm) return first;
  const second = await password({ message: `Repeat ${what}`, mask: '*' });
  if (first !== second) throw new AppError('validation_failed', `the two ${what}s differ`);
  return first;
}

export interface BackupKeyOptions {
  keyFile?: string;
  passphraseFile?: string;
  passphraseStdin?: boolean;
}

/**
 * The one key of `dragnet backup`/`restore`: --key-file, --passphrase-file or --passphrase-stdin
 * (the files also from DRAGNET_BACKUP_KEY_FILE, DRAGNET_BACKUP_PASSPHRASE_FILE), else a prompt
 * when a person is at a terminal, asked twice for a backup.
 */
export async function resolveBackupKey(options: BackupKeyOptions, purpose: 'backup' | 'restore'): Promise<BackupKey> {
  const given = [
    options.keyFile && '--key-file',
    options.passphraseFile && '--passphrase-file',
    options.passphraseStdin && '--passphrase-stdin',
  ].filter(Boolean);
  if (given.length > 1)
    throw new AppError('validation_failed', `give one of ${given.join(', ')} (the environment may set one)`);
  if (options.keyFile) return { keyFile: options.keyFile };
  if (options.passphraseFile) {
    try {
      return { passphrase: readFileSync(options.passphraseFile, 'utf8').split(/\r?\n/)[0]! };
    } catch (error) {
      throw new AppError(
        'validation_failed',
        `--passphrase-file ${options.passphraseFile} cannot be read: ${(error as Error).message}`,
      );
    }
  }
  if (options.passphraseStdin) return { passphrase: await readStdin() };
  if (process.stdin.isTTY) return { passphrase: await prompt('backup passphrase', { confirm: purpose === 'backup' }) };
  throw new AppError(
    'validation_failed',
    `backups are encrypted: give --key-file <age key file>, --passphrase-file <file> or --passphrase-stdin (or DRAGNET_BACKUP_KEY_FILE, DRAGNET_BACKUP_PASSPHRASE_FILE)`,
  );
}
