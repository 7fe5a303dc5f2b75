import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import type { CliContext } from '../cli-context.ts';

export function registerMigrateCommand(program: Command, cli: CliContext): void {
  program
    .command('migrate')
    .description('apply pending store migrations')
    .action(async () => {
      const config = loadConfig();
      const [{ openStore }, { migrateToLatest }, { createKeyRing }, { sourceMigrations }] = await Promise.all([
        import('../../db/store.ts'),
        import('../../db/migrate.ts'),
        import('../../lib/crypto.ts'),
        import('../../modules/sources/index.ts'),
      ]);
      const store = openStore({
        dataDir: config.dataDir,
        databaseUrl: config.databaseUrl,
        busyTimeoutMs: config.sqliteBusyTimeoutMs,
      });
      try {
        const applied = await migrateToLatest(store, {
          keys: createKeyRing(config.masterKey, config.cardHashKey),
          sourceMigrations: sourceMigrations(),
        });
        cli
          .output()
          .emit({ applied, store: store.engine }, () =>
            applied.length ? `applied: ${applied.join(', ')}` : 'store is up to date',
          );
      } finally {
        await store.close();
      }
    });
}
