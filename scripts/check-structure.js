// The structure check of `npm run lint` (docs/architecture.md "Module boundaries"): import
// cycles among the files of src/, found by madge, tests left out.
//
// Imports run one way, from start-up files through modules down to http/, db/ and lib/. A cycle
// at run time is never allowed: which file of it finishes loading first depends on where the
// process came in, and a module then reads an import that is not there yet. A cycle of type
// imports costs nothing at run time but still ties files that should be understood apart;
// one is tolerated (issue #22).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const checks = [
  { what: 'import cycles at run time', skipTypeImports: true, allowed: 0 },
  { what: 'import cycles counting type imports', skipTypeImports: false, allowed: 1 },
];

/** Each cycle as the list of its files, relative to src/. */
async function importCycles(skipTypeImports) {
  const graph = await madge(path.join(root, 'src'), {
    fileExtensions: ['ts'],
    tsConfig: path.join(root, 'tsconfig.json'),
    excludeRegExp: [/\.test\.ts$/],
    detectiveOptions: { ts: { skipTypeImports } },
  });
  return graph.circular();
}

const results = await Promise.all(
  checks.map(async (check) => ({ ...check, cycles: await importCycles(check.skipTypeImports) })),
);
let failed = false;
for (const { what, allowed, cycles } of results) {
  const over = cycles.length > allowed;
  failed ||= over;
  console.log(`${over ? 'FAIL' : 'ok  '} ${cycles.length} ${what} in src/ (at most ${allowed})`);
  for (const cycle of cycles) console.log(`       ${[...cycle, cycle[0]].join(' -> ')}`);
}
if (failed) process.exitCode = 1;
