/**
 * Benchmark entry point: `npm run bench -- <name> [options]` runs bench/<name>.bench.ts, whose
 * `run(args)` gets the remaining arguments. Benchmarks are discovered from this folder, so a new
 * one only needs a bench/<name>.bench.ts exporting `run(args: string[]): Promise<void>`.
 * A benchmark reports failure (e.g. a missed target) through process.exitCode.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { closeAllScopes } from './support/cleanup.ts';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const SUFFIX = '.bench.ts';

function available(): string[] {
  return readdirSync(benchDir)
    .filter((file) => file.endsWith(SUFFIX))
    .map((file) => file.slice(0, -SUFFIX.length))
    .sort();
}

function usage(stream: NodeJS.WriteStream): void {
  const names = available();
  stream.write(
    [
      'usage: npm run bench -- <name> [options]      (npm run bench -- <name> --help for its options)',
      `benchmarks: ${names.length > 0 ? names.join(', ') : '(none found in bench/)'}`,
      '',
    ].join('\n'),
  );
}

interface BenchModule {
  run(args: string[]): Promise<void>;
}

const isBenchModule = (value: unknown): value is BenchModule =>
  typeof value === 'object' && value !== null && typeof (value as { run?: unknown }).run === 'function';

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--help' || name === '-h') {
    usage(process.stdout);
    return 0;
  }
  if (!name) {
    usage(process.stderr);
    return 2;
  }
  if (!available().includes(name)) {
    process.stderr.write(`unknown benchmark "${name}"\n`);
    usage(process.stderr);
    return 2;
  }

  const module: unknown = await import(pathToFileURL(path.join(benchDir, name + SUFFIX)).href);
  if (!isBenchModule(module)) {
    process.stderr.write(`bench/${name}${SUFFIX} does not export run(args: string[]): Promise<void>\n`);
    return 2;
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: cleaning up\n`);
      void closeAllScopes().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  try {
    await module.run(args);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await closeAllScopes();
  }
}

// Exit explicitly: a stray handle (a socket, a timer) must not keep a finished benchmark alive.
process.exit(await main(process.argv.slice(2)));
