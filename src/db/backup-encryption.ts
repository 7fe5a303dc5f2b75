import { closeSync, createReadStream, openSync, readFileSync, readSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Decrypter, Encrypter, identityToRecipient } from 'age-encryption';
import { AppError } from '../lib/errors.ts';

/**
 * Backups are age files (age-encryption.org/v1), so the standard `age` tool decrypts them too:
 * with a passphrase (scrypt) or an age key file (X25519, as `age-keygen` writes it).
 */
export type BackupKey = { passphrase: string } | { keyFile: string };

/** age's advice for scrypt: at least 8-10 random characters; a passphrase guards secret.key. */
const MIN_PASSPHRASE_LENGTH = 12;
const AGE_MAGIC = 'age-encryption.org/v1\n';
const ARMORED_MAGIC = '-----BEGIN AGE ENCRYPTED FILE-----';

interface KeyFile {
  identities: string[];
  recipients: string[];
}

/** An age key file: `AGE-SECRET-KEY-1…` identities and/or `age1…` recipients, one a line, `#` comments. */
function readKeyFile(file: string): KeyFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new AppError('validation_failed', `--key-file ${file} cannot be read: ${(error as Error).message}`);
  }
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const keys = {
    identities: lines.filter((line) => line.startsWith('AGE-SECRET-KEY-1')),
    recipients: lines.filter((line) => line.startsWith('age1')),
  };
  if (keys.identities.length + keys.recipients.length !== lines.length || lines.length === 0) {
    throw new AppError(
      'validation_failed',
      `--key-file ${file} is not an age key file (AGE-SECRET-KEY-1… or age1… lines, as age-keygen writes)`,
    );
  }
  return keys;
}

/** Runs `use` on a key file's keys; a key age rejects is a 4xx naming the file, not a crash. */
async function withKeyFile<T>(file: string, use: (keys: KeyFile) => T | Promise<T>): Promise<T> {
  const keys = readKeyFile(file);
  try {
    return await use(keys);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('validation_failed', `--key-file ${file}: ${(error as Error).message}`);
  }
}

function checkPassphrase(passphrase: string) {
  if (passphrase.length < MIN_PASSPHRASE_LENGTH) {
    throw new AppError(
      'validation_failed',
      `the backup passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters`,
      {
        fields: [{ field: 'passphrase', message: `at least ${MIN_PASSPHRASE_LENGTH} characters` }],
      },
    );
  }
}

/**
 * What encrypts an archive for `key`: the key file's recipients (its identities' too), or the
 * passphrase. Made before the backup starts, so a bad key fails before any work.
 */
export async function createBackupEncrypter(key: BackupKey): Promise<(plain: Readable) => Promise<Readable>> {
  const encrypter = new Encrypter();
  if ('passphrase' in key) {
    checkPassphrase(key.passphrase);
    encrypter.setPassphrase(key.passphrase);
  } else {
    await withKeyFile(key.keyFile, async ({ identities, recipients }) => {
      for (const recipient of [
        ...recipients,
        ...(await Promise.all(identities.map((identity) => identityToRecipient(identity)))),
      ])
        encrypter.addRecipient(recipient);
    });
  }
  return async (plain) =>
    Readable.fromWeb(
      (await encrypter.encrypt(Readable.toWeb(plain) as ReadableStream<Uint8Array>)) as WebReadableStream<Uint8Array>,
    );
}

/** The first bytes of a file, to tell an age file from anything else before decrypting it. */
function leadingText(file: string, bytes: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0)).toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/**
 * The plaintext archive of the age file `file`. Fails before any of it is read when the file is
 * not an age file or the passphrase or key does not open it; a file altered later fails the
 * stream where the alteration is.
 */
export async function decryptBackup(key: BackupKey, file: string): Promise<Readable> {
  const start = leadingText(file, ARMORED_MAGIC.length);
  if (start.startsWith(ARMORED_MAGIC))
    throw new AppError('validation_failed', `${file} is ASCII-armored (age -a): restore reads the binary age format`);
  if (!start.startsWith(AGE_MAGIC)) {
    throw new AppError(
      'validation_failed',
      `${file} is not an encrypted dragnet backup (an age file); a plain archive from an older version can be encrypted with \`age -p\` or \`age -R\` first`,
    );
  }
  const decrypter = new Decrypter();
  if ('passphrase' in key) {
    decrypter.addPassphrase(key.passphrase);
  } else {
    await withKeyFile(key.keyFile, ({ identities }) => {
      if (identities.length === 0)
        throw new AppError(
          'validation_failed',
          `--key-file ${key.keyFile} holds only recipients (age1…): a restore needs the identity (AGE-SECRET-KEY-1…)`,
        );
      for (const identity of identities) decrypter.addIdentity(identity);
    });
  }
  const encrypted = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
  try {
    return Readable.fromWeb((await decrypter.decrypt(encrypted)) as WebReadableStream<Uint8Array>);
  } catch (error) {
    const message = (error as Error).message;
    throw new AppError(
      'validation_failed',
      /no identity matched/.test(message)
        ? `${file} cannot be decrypted with this ${'passphrase' in key ? 'passphrase' : 'key file'}: give the one the backup was made with`
        : `${file} is not a readable encrypted backup: ${message}`,
    );
  }
}
