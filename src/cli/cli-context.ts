import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.ts';
import type { Container } from '../container.ts';
import { createOutput, type Output } from './output.ts';

type SourcesModule = typeof import('../modules/sources/index.ts');

/** What every command needs from the program around it, with the heavy modules loaded on first use. */
export interface CliContext {
  /** Plain text or, with the global --json, machine-readable JSON. */
  output(): Output;
  loadContainer(config: Config): Promise<Container>;
  /** The source catalog when the command line loaded it up front (for `ingest --help`), else null. */
  preloadedSources: SourcesModule | null;
  loadSources(): Promise<SourcesModule>;
  /** Opens the store (migrating it), runs the action, and always closes the store. */
  withContainer(action: (container: Container, out: Output) => Promise<void>): Promise<void>;
}

export function createCliContext(program: Command, preloadedSources: SourcesModule | null): CliContext {
  const output = () => createOutput(Boolean(program.opts().json));
  const loadContainer = async (config: Config) => (await import('../container.ts')).createContainer(config);
  return {
    output,
    loadContainer,
    preloadedSources,
    loadSources: async () => preloadedSources ?? import('../modules/sources/index.ts'),
    async withContainer(action) {
      const container = await loadContainer(loadConfig());
      try {
        await action(container, output());
      } finally {
        await container.close();
      }
    },
  };
}
