import { Option, type Command } from 'commander';
import { loadConfig } from '../../config.ts';
import type { CliContext } from '../cli-context.ts';
import { resolveBackupKey, type BackupKeyOptions } from '../password-input.ts';

/** How backups are encrypted and decrypted (docs/operations.md "Backups"). */
const backupKeyOptions = (command: Command) =>
  command
    .addOption(
      new Option(
        '--key-file <file>',
        'an age key file (age-keygen): its identity, or for a backup only its recipient (age1…)',
      ).env('DRAGNET_BACKUP_KEY_FILE'),
    )
    .addOption(
      new Option('--passphrase-file <file>', 'the passphrase: the first line of this file').env(
        'DRAGNET_BACKUP_PASSPHRASE_FILE',
      ),
    )
    .option('--passphrase-stdin', 'read the passphrase from standard input');

export function registerBackupCommands(program: Command, cli: CliContext): void {
  backupKeyOptions(
    program
      .command('backup <file>')
      .description(
        'write the store (SQLite online backup, or pg_dump) and the data files a restore needs into one age-encrypted tar archive',
      ),
  ).action(async (file: string, options: BackupKeyOptions) => {
    const config = loadConfig();
    const { backupStore } = await import('../../db/backup.ts');
    const summary = await backupStore(config, file, await resolveBackupKey(options, 'backup'));
    cli
      .output()
      .emit(
        { file, ...summary },
        () => `backed up the ${summary.engine} store to ${file} (${summary.bytes} bytes: ${summary.files.join(', ')})`,
      );
  });

  backupKeyOptions(
    program
      .command('restore <file>')
      .description(
        'restore a backup into the configured store (a fresh data folder or database); stop every dragnet process of the store first',
      )
      .option('--force', 'replace a store that already holds data'),
  ).action(async (file: string, options: BackupKeyOptions & { force?: boolean }) => {
    const config = loadConfig();
    const [{ restoreStore }, { createKeyRing }, { sourceMigrations }] = await Promise.all([
      import('../../db/backup.ts'),
      import('../../lib/crypto.ts'),
      import('../../modules/sources/index.ts'),
    ]);
    const summary = await restoreStore(config, file, {
      force: Boolean(options.force),
      key: await resolveBackupKey(options, 'restore'),
      // The backup's secret.key replaces the data folder's: read the keys again after it.
      keys: () => {
        const restored = loadConfig();
        return createKeyRing(restored.masterKey, restored.cardHashKey);
      },
      sourceMigrations: sourceMigrations(),
    });
    cli
      .output()
      .emit(
        { file, ...summary },
        () =>
          `restored the ${summary.engine} store from ${file} (${summary.files.join(', ')})${summary.applied.length ? `; migrated: ${summary.applied.join(', ')}` : ''}`,
      );
    if (summary.card_key === 'different') {
      process.stderr.write(
        'warning: this data folder\'s card hash key (card-hash.key or DRAGNET_CARD_HASH_KEY) is not the one the backup\'s cards were stored with: cards ingested again are stored again, and 7- or 8-digit BIN rules miss the restored cards. Put the old key in place before dragnet starts again (docs/operations.md "Card hash key").\n',
      );
    }
  });
}
