import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { Ingester, SourceContext } from '../../kit/source.ts';
import { detectFormat, peekInput, type DetectableFormat } from '../ingest/format-detection.ts';
import {
  failInput,
  IngestError,
  inputLine,
  newInputResult,
  readLines,
  reject,
  reportInputs,
  warn,
  type InputResult,
  type IngestProgress,
  withSpooledStdin,
} from '../ingest/ingest-kit.ts';
import type { CredentialRecord, MachineInfo } from './credential.ts';
import { createCredentialWriter, type CredentialWriter, type LeakFile, type LeakKind } from './credential-store.ts';
import { holdsComboLine, parseComboLine } from './parsers/combolist.ts';
import { createPasswordBlockReader, holdsPasswordBlock, PASSWORD_FILES } from './parsers/stealer-log.ts';
import { parseSystemInfo, SYSTEM_FILES } from './parsers/system-info.ts';

/**
 * `dragnet ingest filtered_leak`: credentials from combolists and stealer logs into the
 * credential store that the filtered-leak and distinct-leak sources read (docs/ingest.md).
 * A file is known by its content (SHA-256): ingested again it adds nothing, and an ingest that
 * was interrupted resumes after its last stored batch.
 */
const BATCH = 5000;
const COMBO_EXTENSIONS = new Set(['.txt', '.csv', '.lst', '']);

type Format = 'auto' | 'combolist' | 'stealer_log';

/** What `auto` tells apart in one file or standard input; a folder or a zip is told by its files. */
const DETECTABLE: readonly DetectableFormat[] = [
  {
    name: 'stealer_log',
    writtenBy:
      'a stealer log passwords file (RedLine/META, Vidar, Raccoon, Lumma, StealC, RisePro…), or a folder or .zip of stealer logs',
    detect: (head, fileName) => PASSWORD_FILES.has(fileName.toLowerCase()) || holdsPasswordBlock(head),
  },
  {
    name: 'combolist',
    writtenBy: 'combolist lines (email:password, url:login:password, url|login|password)',
    detect: (head) => holdsComboLine(head),
  },
];

const baseName = (file: string) => path.basename(file).toLowerCase();

async function sha256Of(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** One file's lines into the store, from where an earlier ingest of it stopped. */
async function ingestLines(options: {
  writer: CredentialWriter;
  file: LeakFile;
  lines: AsyncIterable<{ line: string; number: number }>;
  label: string;
  kind: LeakKind;
  machine: MachineInfo | null;
  result: InputResult;
}) {
  const { writer, file, label, result } = options;
  if (file.complete) {
    result.records += file.records;
    result.duplicates += file.records;
    return;
  }
  let pending: CredentialRecord[] = [];
  let lastLine = file.linesDone;
  const store = async (linesDone: number) => {
    result.added += await writer.write(file, pending, linesDone);
    pending = [];
  };
  const take = (record: CredentialRecord) => {
    result.records++;
    pending.push(record);
  };
  const blocks = options.kind === 'stealer_log' ? createPasswordBlockReader(options.machine) : null;
  const takeBlocks = (done: ReturnType<NonNullable<typeof blocks>['end']>) => {
    for (const block of done) {
      if (block.record) take(block.record);
      else reject(result, `${label} line ${block.line}`, block.reason!);
    }
  };
  for await (const { line, number } of options.lines) {
    if (number <= file.linesDone) continue;
    lastLine = number;
    if (blocks) {
      takeBlocks(blocks.push(line, number));
    } else {
      const parsed = parseComboLine(line);
      if (typeof parsed === 'string') reject(result, `${label} line ${number}`, parsed);
      else if (parsed) take(parsed);
    }
    // A stealer-log batch ends before the block still being read: that is where to resume.
    if (pending.length >= BATCH) await store(blocks ? (blocks.openedAt() ?? number + 1) - 1 : number);
  }
  if (blocks) takeBlocks(blocks.end());
  await store(lastLine);
  await writer.finish(file);
}

/** Every file under a folder, in name order. */
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

const fileLines = (file: string, progress?: IngestProgress) =>
  readLines(createReadStream(file), (bytes) => progress?.advance(bytes));

async function readTextFile(file: string): Promise<string> {
  const lines: string[] = [];
  for await (const { line } of readLines(createReadStream(file))) lines.push(line);
  return lines.join('\n');
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (error, zip) => (error ? reject(error) : resolve(zip))),
  );
}

function entryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))),
  );
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
 * What the system file at `label` says of a machine whose folder is `folder`; the values it
 * could not read are warnings of the input, once per system file.
 */
function machineOf(text: string, label: string, folder: string | null, result: InputResult): MachineInfo {
  const { machine, warnings } = parseSystemInfo(text);
  for (const { line, reason } of warnings) warn(result, `${label} line ${line}`, reason);
  return { ...machine, folder };
}

/**
 * A stealer-log archive, read in two passes over its entries: the small system files first
 * (a machine's country and date must be known before its passwords are stored), then the
 * passwords files, each streamed. An entry is known by the archive's hash and its path.
 */
async function ingestStealerZip(
  { writer, progress }: { writer: CredentialWriter; progress?: IngestProgress },
  file: string,
  result: InputResult,
) {
  const archive = await sha256Of(createReadStream(file));
  const name = path.basename(file);
  const machines = new Map<string, MachineInfo>();
  // The machine of a passwords entry: the nearest folder above it that holds a system file.
  const machineOfEntry = (entryName: string): MachineInfo | null => {
    for (let dir = path.posix.dirname(entryName); ; dir = path.posix.dirname(dir)) {
      const machine = machines.get(dir);
      if (machine) return machine;
      if (dir === '.' || dir === '/') break;
    }
    const dir = path.posix.dirname(entryName);
    return dir === '.' ? null : { country: null, os: null, infectedAt: null, folder: path.posix.basename(dir) };
  };
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (error) {
    throw new IngestError(file, 'archive', `not a readable zip file (${(error as Error).message})`);
  }
  try {
    let passwordBytes = 0;
    await forEachEntry(zip, async (entry) => {
      const entryName = baseName(entry.fileName);
      if (SYSTEM_FILES.has(entryName)) {
        let text = '';
        for await (const { line } of readLines(await entryStream(zip, entry))) text += `${line}\n`;
        const dir = path.posix.dirname(entry.fileName);
        machines.set(dir, machineOf(text, entry.fileName, dir === '.' ? null : path.posix.basename(dir), result));
      } else if (PASSWORD_FILES.has(entryName)) {
        passwordBytes += entry.uncompressedSize;
      }
    });
    zip.close();
    zip = await openZip(file);
    progress?.start(file, passwordBytes, 'bytes');
    await forEachEntry(zip, async (entry) => {
      if (!PASSWORD_FILES.has(baseName(entry.fileName))) return;
      const leak = await writer.open(
        createHash('sha256').update(`${archive}\n${entry.fileName}`).digest('hex'),
        name,
        'stealer_log',
      );
      const machine = machineOfEntry(entry.fileName);
      const lines = readLines(await entryStream(zip, entry), (bytes) => progress?.advance(bytes));
      await ingestLines({ writer, file: leak, lines, label: entry.fileName, kind: 'stealer_log', machine, result });
    });
  } finally {
    zip.close();
  }
}

function createCredentialIngest(context: SourceContext, progress?: IngestProgress) {
  const writer = createCredentialWriter(context);

  async function combolist(file: string, name: string, result: InputResult) {
    const leak = await writer.open(await sha256Of(createReadStream(file)), name, 'combolist');
    progress?.start(name, statSync(file).size, 'bytes');
    await ingestLines({
      writer,
      file: leak,
      lines: fileLines(file, progress),
      label: name,
      kind: 'combolist',
      machine: null,
      result,
    });
  }

  /** A stealer-log folder: each folder holding a passwords file is one infected machine. */
  async function stealerFolder(folder: string, files: string[], result: InputResult) {
    const passwordFiles = files.filter((file) => PASSWORD_FILES.has(baseName(file)));
    progress?.start(
      folder,
      passwordFiles.reduce((n, file) => n + statSync(file).size, 0),
      'bytes',
    );
    const machines = new Map<string, MachineInfo>();
    for (const file of passwordFiles)
      await machineFile({
        file,
        root: folder,
        name: path.basename(path.resolve(folder)),
        label: path.relative(folder, file),
        result,
        machines,
      });
  }

  /**
   * One machine's passwords file. The machine is the nearest folder above it (up to `root`)
   * that holds a system file, else the file's own folder: families nest passwords files
   * (`Browsers/Passwords.txt`) under the machine's folder. `machines` keeps each machine's
   * system file read once.
   */
  async function machineFile(options: {
    file: string;
    root: string;
    name: string;
    label: string;
    result: InputResult;
    machines: Map<string, MachineInfo>;
  }) {
    const { file, root, name, label, result, machines } = options;
    const stop = path.resolve(root);
    let dir = path.dirname(path.resolve(file));
    let systemFile: string | undefined;
    for (;;) {
      systemFile = readdirSync(dir).find((entry) => SYSTEM_FILES.has(entry.toLowerCase()));
      if (systemFile || dir === stop || path.dirname(dir) === dir) break;
      dir = path.dirname(dir);
    }
    if (!systemFile) dir = path.dirname(path.resolve(file));
    let machine = machines.get(dir);
    if (!machine) {
      const folder = path.basename(dir) || null;
      const systemPath = systemFile ? path.join(dir, systemFile) : null;
      machine = systemPath
        ? machineOf(await readTextFile(systemPath), path.relative(stop, systemPath), folder, result)
        : { country: null, os: null, infectedAt: null, folder };
      machines.set(dir, machine);
    }
    const leak = await writer.open(await sha256Of(createReadStream(file)), name, 'stealer_log');
    await ingestLines({
      writer,
      file: leak,
      lines: fileLines(file, progress),
      label,
      kind: 'stealer_log',
      machine,
      result,
    });
  }

  const stealerZip = (file: string, result: InputResult) => ingestStealerZip({ writer, progress }, file, result);

  /** Standard input is kept in the data folder while it is read: its hash names it first. */
  function stdin(format: Format, result: InputResult) {
    return withSpooledStdin(context.dataDir, async (spooled) => {
      if ((format === 'auto' ? await detectedKind('-', spooled) : format) === 'stealer_log') {
        const leak = await writer.open(await sha256Of(createReadStream(spooled)), 'stdin', 'stealer_log');
        await ingestLines({
          writer,
          file: leak,
          lines: fileLines(spooled, progress),
          label: 'stdin',
          kind: 'stealer_log',
          machine: null,
          result,
        });
      } else {
        await combolist(spooled, 'stdin', result);
      }
    });
  }

  return { combolist, stealerFolder, machineFile, stealerZip, stdin };
}

/** The format of one file from its first bytes (and name); `input` names it in a refusal. */
async function detectedKind(input: string, file: string): Promise<LeakKind> {
  const { head, stream } = await peekInput(file);
  stream.destroy();
  return detectFormat('filtered_leak', input, head, DETECTABLE).name as LeakKind;
}

/** What an input holds; `files` are a folder's, walked once by the caller. */
async function kindOf(input: string, files: string[] | null, format: Format): Promise<LeakKind> {
  if (format !== 'auto') return format;
  if (files) return files.some((file) => PASSWORD_FILES.has(baseName(file))) ? 'stealer_log' : 'combolist';
  if (path.extname(input).toLowerCase() === '.zip') return 'stealer_log';
  return detectedKind(input, input);
}

export function credentialIngester(name: string): Ingester {
  return {
    name,
    description:
      'credentials from stealer logs (folders or .zip archives of RedLine/META, Vidar, Raccoon, Lumma, StealC, RisePro, Atomic… logs) and combolists (.txt), or - (stdin)',
    formats: ['auto', 'combolist', 'stealer_log'],
    async run(context: SourceContext, inputs: string[], options) {
      const ingest = createCredentialIngest(context, options.progress);
      const format = options.format as Format;
      const results: InputResult[] = [];
      for (const input of inputs) {
        const result = newInputResult(input);
        results.push(result);
        try {
          if (input === '-') await ingest.stdin(format, result);
          else if (!statSync(input, { throwIfNoEntry: false }))
            throw new IngestError(input, 'path', 'no such file or folder');
          else {
            const files = statSync(input).isDirectory() ? walk(input) : null;
            const kind = await kindOf(input, files, format);
            if (kind === 'stealer_log' && files) await ingest.stealerFolder(input, files, result);
            else if (kind === 'stealer_log' && path.extname(input).toLowerCase() === '.zip')
              await ingest.stealerZip(input, result);
            else if (files) {
              for (const file of files.filter((f) => COMBO_EXTENSIONS.has(path.extname(f).toLowerCase())))
                await ingest.combolist(file, path.relative(input, file), result);
            } else if (kind === 'stealer_log') {
              options.progress?.start(input, statSync(input).size, 'bytes');
              await ingest.machineFile({
                file: input,
                root: path.dirname(input),
                name: path.basename(input),
                label: path.basename(input),
                result,
                machines: new Map(),
              });
            } else await ingest.combolist(input, path.basename(input), result);
          }
        } catch (error) {
          failInput(result, error);
        }
        options.progress?.finish(inputLine('credentials', result));
      }
      return reportInputs('credentials', results);
    },
  };
}
