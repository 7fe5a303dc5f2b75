// Compiles the TypeScript sources into dist/ so the `dragnet` command starts without a run-time
// TypeScript loader. Run by `npm run build` (and `npm install`'s prepare); bin/dragnet.js calls
// build() itself when dist/ is missing or older than src/.
//
// One esbuild bundle with code splitting: src/cli/index.ts becomes dist/dragnet.js and every
// dynamic import() a chunk of its own, so a command loads only the code it runs. Packages stay in
// node_modules except those listed in INLINED (with their own dependencies): plain JavaScript
// that reads no files of its own, which costs less to parse as part of a chunk than to resolve,
// scan for CommonJS exports and load file by file (kysely and TypeBox are hundreds of files).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'src');
export const distDir = path.join(root, 'dist');
export const entryFile = path.join(distDir, 'dragnet.js');
/** Written last: its presence says the build finished; it holds the sources' newest mtime then. */
const stampFile = path.join(distDir, 'build.json');

const INLINED = new Set([
  'kysely',
  '@sinclair/typebox',
  '@fastify/type-provider-typebox',
  'commander',
  'cli-progress',
  'csv-parse',
  'csv-stringify',
  'ipaddr.js',
  'jose',
  'otpauth',
  'tldts',
  'saxes',
  'yauzl',
  '@peculiar/asn1-schema',
  '@peculiar/asn1-x509',
]);

// Inlined CommonJS code calls require() for Node's own modules, which an ES module lacks.
const requireShim =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** What a build reads besides src/: a change to any of these makes dist/ stale too. */
const buildInputs = [fileURLToPath(import.meta.url), path.join(root, 'package.json')];

const isTest = (name) => name.endsWith('.test.ts');

/** The newest modification time under src/ (directories count: a deleted file changes its folder). */
function newestSourceMtime() {
  let newest = Math.max(...buildInputs.map((file) => statSync(file).mtimeMs));
  const walk = (dir) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (!isTest(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(srcDir);
  return newest;
}

/** Why dist/ needs building, or null when it is current. */
export function staleReason() {
  if (!existsSync(stampFile)) return 'dist/ has not been built';
  const { sourcesMtime } = JSON.parse(readFileSync(stampFile, 'utf8'));
  return !(newestSourceMtime() <= sourcesMtime) ? 'src/ changed since dist/ was built' : null;
}

/**
 * Every output file sits in dist/ itself (entry and chunks alike), so `import.meta.url` is the
 * same folder in all of them. A source's `new URL('./relative', import.meta.url)` is rewritten to
 * point at the same file from there: files under src/ are copied to the same place under dist/,
 * files elsewhere in the checkout (a built dashboard) are referenced where they are.
 */
function runtimeFilesPlugin(copies) {
  const pattern = /new URL\(\s*(['"])(\.\.?\/[^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g;
  return {
    name: 'runtime-files',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const contents = source.replace(pattern, (_whole, quote, relative) => {
          const target = path.resolve(path.dirname(args.path), relative);
          const insideSrc = !path.relative(srcDir, target).startsWith('..');
          if (insideSrc) copies.set(path.join(distDir, path.relative(srcDir, target)), target);
          const fromDist = insideSrc ? path.relative(srcDir, target) : path.relative(distDir, target);
          const url = fromDist.startsWith('..') ? fromDist : `./${fromDist}`;
          return `new URL(${quote}${url.split(path.sep).join('/')}${quote}, import.meta.url)`;
        });
        return { contents, loader: 'ts' };
      });
    },
  };
}

const externalPackagesPlugin = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      const parts = args.path.split('/');
      const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      const fromInlinedPackage = args.importer.includes(`${path.sep}node_modules${path.sep}`);
      return INLINED.has(name) || fromInlinedPackage ? undefined : { external: true };
    });
  },
};

/** Writes through a temporary name, so another process never loads a half-written file. */
function writeAtomically(file, contents) {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

/** Builds dist/ (about a second); files of an earlier build that this one does not write are removed. */
export async function build() {
  const esbuild = await import('esbuild');
  // Taken before esbuild reads the sources: a file saved while it runs leaves dist/ stale.
  const sourcesMtime = newestSourceMtime();
  const copies = new Map();
  const result = await esbuild.build({
    entryPoints: { dragnet: path.join(srcDir, 'cli/index.ts') },
    outdir: distDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    write: false,
    banner: { js: requireShim },
    logLevel: 'warning',
    plugins: [externalPackagesPlugin, runtimeFilesPlugin(copies)],
  });
  const written = new Set([stampFile]);
  // Chunks before the entry that imports them; the stamp last.
  const outputs = [...result.outputFiles].sort((a, b) => Number(a.path === entryFile) - Number(b.path === entryFile));
  for (const output of outputs) {
    writeAtomically(output.path, output.contents);
    written.add(output.path);
  }
  for (const [to, from] of copies) {
    const files = statSync(from).isDirectory() ? readdirSync(from, { recursive: true }).map(String) : [''];
    for (const name of files) {
      if (statSync(path.join(from, name)).isFile())
        writeAtomically(path.join(to, name), readFileSync(path.join(from, name)));
    }
    written.add(to);
  }
  // Another process building at the same moment writes the same files: its temporaries are left alone.
  for (const name of readdirSync(distDir, { recursive: true }).map(String)) {
    const full = path.join(distDir, name);
    const kept =
      name.endsWith('.tmp') || [...written].some((file) => full === file || full.startsWith(file + path.sep));
    if (!kept && statSync(full, { throwIfNoEntry: false })?.isFile()) rmSync(full, { force: true });
  }
  writeAtomically(
    stampFile,
    JSON.stringify({ builtAt: new Date().toISOString(), sourcesMtime, esbuild: esbuild.version }) + '\n',
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await build();
  console.log(`dist/ built in ${Math.round(performance.now() - started)} ms`);
}
