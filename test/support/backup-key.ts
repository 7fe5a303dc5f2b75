import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Decrypter, Encrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { onTestFinished } from 'vitest';
import { createTestStoreLocation, type TestStoreLocation } from './test-store.ts';

export interface BackupKeyFile {
  file: string;
  identity: string;
  recipient: string;
}

/** A fresh age key file in `dir`, as `age-keygen -o` writes it. */
export async function createBackupKeyFile(dir: string, name = 'backup-key.txt'): Promise<BackupKeyFile> {
  const identity = await generateIdentity();
  const recipient = await identityToRecipient(identity);
  const file = path.join(dir, name);
  writeFileSync(file, `# created: ${new Date().toISOString()}\n# public key: ${recipient}\n${identity}\n`, {
    mode: 0o600,
  });
  return { file, identity, recipient };
}

/** An age file of `plain` for `recipient`, as `age -r` makes it: a hostile archive needs the operator's key too. */
export async function ageEncrypt(plain: Buffer, recipient: string): Promise<Uint8Array> {
  const encrypter = new Encrypter();
  encrypter.addRecipient(recipient);
  return encrypter.encrypt(plain);
}

/** The plaintext of an age file, as `age -d -i` gives it: checks a backup is standard age. */
export async function ageDecrypt(file: Buffer, identity: string): Promise<Buffer> {
  const decrypter = new Decrypter();
  decrypter.addIdentity(identity);
  return Buffer.from(await decrypter.decrypt(file));
}

/**
 * A fresh store location, dropped when the current test ends, whose keys live in its data
 * folder (secret.key, card-hash.key) as in a default install: `cliEnv` leaves
 * DRAGNET_SECRET_KEY unset, so a backup must carry the key and the data folder holds it.
 */
export async function createKeysInDataFolderLocation(): Promise<
  TestStoreLocation & { cliEnv: Record<string, string> }
> {
  const location = await createTestStoreLocation();
  onTestFinished(() => location.drop());
  return { ...location, cliEnv: { ...location.env, DRAGNET_SECRET_KEY: '' } };
}
