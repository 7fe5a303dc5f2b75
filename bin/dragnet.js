#!/usr/bin/env node
// Runs the compiled CLI in dist/ (scripts/build.js). `npm install` builds it; a checkout whose
// src/ changed since (a pull, an edit) is rebuilt here first, which takes about a second.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { build, entryFile, staleReason } from '../scripts/build.js';

// Node 22.1 and later keep V8's compiled code of dist/ between runs (in the OS temp folder),
// which saves about a fifth of a command's start-up; Node 20 has no such cache.
module.enableCompileCache?.();

const stale = staleReason();
if (stale) {
  process.stderr.write(`dragnet: ${stale}; building it\n`);
  try {
    await build();
  } catch (error) {
    // An installation the service user cannot write to (copied without its timestamps) still
    // runs the build it has.
    if (!existsSync(entryFile)) throw error;
    process.stderr.write(
      `dragnet: could not rebuild dist/ (${error instanceof Error ? error.message : String(error)}); running the existing build\n`,
    );
  }
}
await import('../dist/dragnet.js');
