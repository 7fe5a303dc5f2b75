import { Command } from 'commander';
import { AppError } from '../lib/errors.ts';
import { createCliContext } from './cli-context.ts';
import { registerBackupCommands } from './commands/backup.ts';
import { registerCollectorsCommands } from './commands/collectors.ts';
import { registerDemoCommand } from './commands/demo.ts';
import { registerIngestCommand } from './commands/ingest.ts';
import { registerMigrateCommand } from './commands/migrate.ts';
import { registerOrgCommands } from './commands/org.ts';
import { registerRulesCommands } from './commands/rules.ts';
import { registerServeCommand } from './commands/serve.ts';
import { registerUserCommands } from './commands/user.ts';
import { registerWorkerCommand } from './commands/worker.ts';

// Everything a dragnet process creates (the store and its -wal/-shm, keys, raw leak files, the
// inbox, backups) is its owner's alone, whatever the service manager's umask.
process.umask(0o077);

// A command imports the modules it runs when it runs: loading every module and its libraries
// took most of a second, which `dragnet --help` or `dragnet user list` should not pay. The
// ingest command lists its targets in its help, so the source catalog is loaded up front for
// that command alone.
const sources = process.argv.includes('ingest') ? await import('../modules/sources/index.ts') : null;

const program = new Command('dragnet')
  .description('Dragnet threat-intelligence search and monitoring')
  .option('--json', 'print machine-readable JSON')
  .showHelpAfterError();

const cli = createCliContext(program, sources);

// Registered in the order `dragnet --help` lists them.
registerServeCommand(program);
registerWorkerCommand(program, cli);
registerMigrateCommand(program, cli);
registerOrgCommands(program, cli);
registerUserCommands(program, cli);
registerBackupCommands(program, cli);
registerRulesCommands(program, cli);
registerIngestCommand(program, cli);
registerCollectorsCommands(program, cli);
registerDemoCommand(program, cli);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof AppError) {
    const fields = error.fields?.length ? ` (${error.fields.map((f) => f.field).join(', ')})` : '';
    process.stderr.write(`error: ${error.message}${fields}\n`);
    process.exitCode = error.code === 'not_found' ? 3 : error.code === 'conflict' ? 4 : 1;
  } else {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
