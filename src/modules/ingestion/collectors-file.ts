import { readFileSync } from 'node:fs';
import { CollectorSettingsError, type Collector } from '../sources/index.ts';

/** A collector as this process runs it: the file's entry applied to the collector's defaults. */
export interface ConfiguredCollector {
  collector: Collector;
  /** The source it feeds, or null for a collector of every source (the inbox). */
  sourceName: string | null;
  enabled: boolean;
  intervalSeconds: number;
  /** What the collector's parseSettings returned (null while disabled). */
  settings: unknown;
}

/** The collectors file cannot be used: names the file and the entry or key. */
export class CollectorsFileError extends Error {}

const MIN_INTERVAL_SECONDS = 1;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads the collectors file (docs/collectors.md): `{ "<collector>": { "enabled": true,
 * "interval_seconds": 300, …settings } }`. A missing file leaves every collector at its
 * defaults, which turns on only those that need neither settings nor network. Any mistake is an
 * error at start-up naming the entry, not a collector that silently never runs.
 */
export function readCollectorsFile(
  file: string,
  known: { collector: Collector; sourceName: string | null }[],
): ConfiguredCollector[] {
  let raw: unknown = {};
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new CollectorsFileError(`collectors file ${file}: ${(error as Error).message}`);
  }
  if (!isPlainObject(raw))
    throw new CollectorsFileError(`collectors file ${file}: must be a JSON object keyed by collector name`);
  const byName = new Map(known.map((entry) => [entry.collector.name, entry]));
  for (const name of Object.keys(raw)) {
    if (!byName.has(name))
      throw new CollectorsFileError(
        `collectors file ${file}: "${name}" is not a collector (known: ${[...byName.keys()].join(', ')})`,
      );
  }
  return known.map(({ collector, sourceName }) => {
    const entry = raw[collector.name as keyof typeof raw] as unknown;
    const where = `collectors file ${file}: ${collector.name}`;
    if (entry !== undefined && !isPlainObject(entry)) throw new CollectorsFileError(`${where}: must be an object`);
    const {
      enabled = entry !== undefined || collector.enabledByDefault,
      interval_seconds: interval = collector.defaultIntervalSeconds,
      ...settings
    } = entry ?? {};
    if (typeof enabled !== 'boolean') throw new CollectorsFileError(`${where}.enabled: must be true or false`);
    if (!Number.isInteger(interval) || (interval as number) < MIN_INTERVAL_SECONDS) {
      throw new CollectorsFileError(`${where}.interval_seconds: must be an integer >= ${MIN_INTERVAL_SECONDS}`);
    }
    let parsed: unknown = null;
    if (enabled) {
      try {
        parsed = collector.parseSettings(settings);
      } catch (error) {
        if (error instanceof CollectorSettingsError)
          throw new CollectorsFileError(`${where}.${error.setting}: ${error.reason}`);
        throw error;
      }
    }
    return { collector, sourceName, enabled, intervalSeconds: interval as number, settings: parsed };
  });
}
