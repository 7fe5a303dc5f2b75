import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import {
  defineCollector,
  findIngester,
  type Ingester,
  type IngestTally,
  type SourceContext,
} from '../sources/index.ts';

const settings = Type.Object({
  /** Absolute, or relative to the data folder; default `<data>/inbox`. */
  folder: Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
    default: null,
    errorMessage: 'must be a folder path',
  }),
});

const DONE = 'done';
const FAILED = 'failed';

/** Files still being written: copy in under such a name and rename when complete. */
const isPartial = (name: string) => name.startsWith('.') || name.endsWith('.part') || name.endsWith('.tmp');

/** The files waiting in an ingester's folder, with the format each is read in. */
function waiting(folder: string, ingester: Ingester): { file: string; format: string }[] {
  const found: { file: string; format: string }[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (isPartial(name) || name === DONE || name === FAILED) continue;
    const full = path.join(folder, name);
    const stat = statSync(full);
    if (stat.isFile()) found.push({ file: full, format: ingester.formats[0]! });
    else if (stat.isDirectory() && ingester.formats.includes(name)) {
      for (const inner of readdirSync(full).sort()) {
        const file = path.join(full, inner);
        if (!isPartial(inner) && statSync(file).isFile()) found.push({ file, format: name });
      }
    }
  }
  return found;
}

/** Moves a handled file under done/ or failed/ of its ingester folder, with its report beside it. */
function fileAway(ingesterFolder: string, file: string, outcome: typeof DONE | typeof FAILED, report: unknown) {
  const target = path.join(ingesterFolder, outcome);
  mkdirSync(target, { recursive: true });
  const stamped = `${new Date().toISOString().replaceAll(':', '')}-${path.basename(file)}`;
  renameSync(file, path.join(target, stamped));
  writeFileSync(path.join(target, `${stamped}.report.json`), JSON.stringify(report, null, 2) + '\n');
}

/**
 * The drop folder: `<inbox>/<ingester>/<file>` is ingested as `dragnet ingest <ingester> <file>`
 * would (a subfolder named after one of the ingester's formats picks that format), then moved to
 * `done/` or `failed/` with its report. It needs no network, so it is on by default: a host that
 * only shares a folder with Dragnet can still feed it (docs/collectors.md).
 */
export const inboxCollector = defineCollector({
  name: 'inbox',
  description:
    'Ingests files dropped into <inbox>/<ingester>/ (e.g. inbox/certificate/frames.jsonl), then files them under done/ or failed/',
  defaultIntervalSeconds: 30,
  enabledByDefault: true,
  settings,
  async run(context: SourceContext, run) {
    const inbox = path.resolve(context.dataDir, run.settings.folder ?? 'inbox');
    mkdirSync(inbox, { recursive: true });
    let items = 0;
    const ingested: { ingester: string; tally: IngestTally }[] = [];
    for (const name of readdirSync(inbox).sort()) {
      const ingester = findIngester(name);
      const folder = path.join(inbox, name);
      if (!ingester || !statSync(folder).isDirectory()) continue;
      for (const { file, format } of waiting(folder, ingester)) {
        if (run.signal.aborted) return { items, cursor: null, ingested };
        const report = await ingester.run(context, [file], { format });
        items += report.tally.added;
        ingested.push({ ingester: ingester.name, tally: report.tally });
        fileAway(folder, file, report.failed ? FAILED : DONE, { format, ...report.tally, summary: report.summary });
        run.log(`${path.relative(inbox, file)}: ${report.lines[0] ?? ''}`);
      }
    }
    return { items, cursor: null, ingested };
  },
});
