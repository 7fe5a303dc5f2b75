import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { Ingester, SourceContext } from '../source.ts';
import { IngestError, inputLine, newInputResult, openInput, readLines, reject, reportInputs, type InputResult, type IngestProgress } from '../ingest/ingest-kit.ts';
import type { CredentialRecord, MachineInfo } from './credential.ts';
import { createCredentialWriter, type CredentialWriter, type LeakKind } from './credential-store.ts';
import { parseComboLine } from './parsers/combolist.ts';
import { createPasswordBlockReader, parseSystemInfo, PASSWORD_FILES, SYSTEM_FILES } from './parsers/stealer-log.ts';

/**
 * `dragnet ingest filtered_leak`: credentials from combolists and stealer logs into the
 * credential store that the filtered-leak and distinct-leak sources read (docs/ingest.md).
 */
const BATCH = 5000;
const COMBO_EXTENSIONS = new Set(['.txt', '.csv', '.lst', '']);

type Format = 'auto' | 'combolist' | 'stealer_log';

const baseName = (file: string) => path.basename(file).toLowerCase();

/** Collects records and writes them a batch (one transaction) at a time. */
function createBatcher(writer: CredentialWriter, leak: number, result: InputResult) {
  let pending: CredentialRecord[] = [];
  const flush = async () => {
    const counts = await writer.write(leak, pending);
    result.added += counts.added;
    result.duplicates += counts.duplicates;
    pending = [];
  };
  return {
    async add(record: CredentialRecord) {
      result.records++;
      pending.push(record);
      if (pending.length >= BATCH) await flush();
    },
    flush,
  };
}

async function readCombolist(stream: Readable, label: string, batcher: ReturnType<typeof createBatcher>, result: InputResult, progress?: IngestProgress) {
  for await (const { line, number } of readLines(stream, (bytes) => progress?.advance(bytes))) {
    const parsed = parseComboLine(line);
    if (parsed === null) continue;
    if (typeof parsed === 'string') reject(result, `${label} line ${number}`, parsed);
    else await batcher.add(parsed);
  }
}

async function readPasswordFile(stream: Readable, label: string, machine: MachineInfo | null, batcher: ReturnType<typeof createBatcher>, result: InputResult, progress?: IngestProgress) {
  const reader = createPasswordBlockReader(machine);
  const take = async (blocks: ReturnType<typeof reader.end>) => {
    for (const block of blocks) {
      if (block.record) await batcher.add(block.record);
      else reject(result, `${label} line ${block.line}`, block.reason!);
    }
  };
  for await (const { line, number } of readLines(stream, (bytes) => progress?.advance(bytes))) await take(reader.push(line, number));
  await take(reader.end());
}

/** Every file under a folder, relative paths in name order. */
function walk(folder: string): string[] {
  const files: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.isFile()) files.push(full);
    }
  };
  visit(folder);
  return files;
}

async function readTextFile(file: string): Promise<string> {
  const chunks: string[] = [];
  for await (const { line } of readLines(openInput(file).stream)) chunks.push(line);
  return chunks.join('\n');
}

/** A stealer-log folder: each folder holding a passwords file is one infected machine. */
async function ingestStealerFolder(folder: string, batcher: ReturnType<typeof createBatcher>, result: InputResult, progress?: IngestProgress) {
  const files = walk(folder);
  const passwordFiles = files.filter((file) => PASSWORD_FILES.has(baseName(file)));
  progress?.start(folder, passwordFiles.reduce((n, file) => n + statSync(file).size, 0), 'bytes');
  for (const file of passwordFiles) {
    const dir = path.dirname(file);
    const systemFile = files.find((candidate) => path.dirname(candidate) === dir && SYSTEM_FILES.has(baseName(candidate)));
    const machine = systemFile ? parseSystemInfo(await readTextFile(systemFile)) : null;
    await readPasswordFile(openInput(file).stream, path.relative(folder, file), machine, batcher, result, progress);
  }
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => yauzl.open(file, { lazyEntries: true, autoClose: false }, (error, zip) => (error ? reject(error) : resolve(zip))));
}

function entryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));
}

/** Each entry of a zip in turn (entries are read one at a time: the archive is never loaded). */
async function forEachEntry(zip: yauzl.ZipFile, visit: (entry: yauzl.Entry) => Promise<void>): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      visit(entry).then(
        () => zip.readEntry(),
        (error: unknown) => reject(error),
      );
    });
    zip.once('end', () => resolve());
    zip.once('error', reject);
    zip.readEntry();
  });
  zip.removeAllListeners('entry');
}

/**
 * A stealer-log archive, read in two passes over its entries: the small system files first
 * (a machine's country and date must be known before its passwords are stored), then the
 * passwords files, each streamed.
 */
async function ingestStealerZip(file: string, batcher: ReturnType<typeof createBatcher>, result: InputResult, progress?: IngestProgress) {
  const machines = new Map<string, MachineInfo>();
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (error) {
    throw new IngestError(file, 'archive', `not a readable zip file (${(error as Error).message})`);
  }
  try {
    let passwordBytes = 0;
    await forEachEntry(zip, async (entry) => {
      const name = baseName(entry.fileName);
      if (SYSTEM_FILES.has(name)) {
        let text = '';
        for await (const { line } of readLines(await entryStream(zip, entry))) text += `${line}\n`;
        machines.set(path.posix.dirname(entry.fileName), parseSystemInfo(text));
      } else if (PASSWORD_FILES.has(name)) {
        passwordBytes += entry.uncompressedSize;
      }
    });
    zip.close();
    zip = await openZip(file);
    progress?.start(file, passwordBytes, 'bytes');
    await forEachEntry(zip, async (entry) => {
      if (!PASSWORD_FILES.has(baseName(entry.fileName))) return;
      const machine = machines.get(path.posix.dirname(entry.fileName)) ?? null;
      await readPasswordFile(await entryStream(zip, entry), entry.fileName, machine, batcher, result, progress);
    });
  } finally {
    zip.close();
  }
}

function kindOf(input: string, format: Format): LeakKind {
  if (format !== 'auto') return format;
  if (input === '-') return 'combolist';
  const stat = statSync(input);
  if (stat.isDirectory()) return walk(input).some((file) => PASSWORD_FILES.has(baseName(file))) ? 'stealer_log' : 'combolist';
  if (path.extname(input).toLowerCase() === '.zip' || PASSWORD_FILES.has(baseName(input))) return 'stealer_log';
  return 'combolist';
}

export function credentialIngester(name: string): Ingester {
  return {
    name,
    description: 'credentials from stealer logs (folders or .zip archives of RedLine/Raccoon/Vidar logs) and combolists (.txt), or - (stdin)',
    formats: ['auto', 'combolist', 'stealer_log'],
    async run(context: SourceContext, inputs: string[], options) {
      const writer = createCredentialWriter(context);
      const format = options.format as Format;
      const results: InputResult[] = [];
      for (const input of inputs) {
        const result = newInputResult(input);
        results.push(result);
        try {
          if (input !== '-' && !statSync(input, { throwIfNoEntry: false })) throw new IngestError(input, 'path', 'no such file or folder');
          const kind = kindOf(input, format);
          const leakName = input === '-' ? 'stdin' : path.basename(path.resolve(input));
          const batcher = createBatcher(writer, await writer.leakId(leakName, kind), result);
          const isFolder = input !== '-' && statSync(input).isDirectory();
          if (kind === 'stealer_log' && isFolder) await ingestStealerFolder(input, batcher, result, options.progress);
          else if (kind === 'stealer_log' && path.extname(input).toLowerCase() === '.zip') await ingestStealerZip(input, batcher, result, options.progress);
          else if (isFolder) {
            const files = walk(input).filter((file) => COMBO_EXTENSIONS.has(path.extname(file).toLowerCase()));
            options.progress?.start(input, files.reduce((n, file) => n + statSync(file).size, 0), 'bytes');
            for (const file of files) await readCombolist(openInput(file).stream, path.relative(input, file), batcher, result, options.progress);
          } else {
            const { stream, size } = openInput(input);
            if (size !== null) options.progress?.start(input, size, 'bytes');
            if (kind === 'stealer_log') await readPasswordFile(stream, input, null, batcher, result, options.progress);
            else await readCombolist(stream, input === '-' ? 'stdin' : path.basename(input), batcher, result, options.progress);
          }
          await batcher.flush();
        } catch (error) {
          if (!(error instanceof IngestError)) throw error;
          result.ok = false;
          result.error = error.message;
        }
        options.progress?.finish(inputLine('credentials', result));
      }
      return reportInputs('credentials', results);
    },
  };
}
