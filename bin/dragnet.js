#!/usr/bin/env node
// Runs the compiled CLI in dist/ (scripts/build.js). `npm install` builds it; a checkout whose
// src/ changed since (a pull, an edit) is rebuilt here first, which takes about a second.
import { build, staleReason } from '../scripts/build.js';

const stale = staleReason();
if (stale) {
  process.stderr.write(`dragnet: ${stale}; building it\n`);
  await build();
}
await import('../dist/dragnet.js');
