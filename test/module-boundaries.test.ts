import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/cli.ts';

/**
 * docs/architecture.md "Module boundaries": code outside a module imports it only through its
 * index.ts. A deep import is how a module's internals start to leak, so this reads every import.
 */
const src = path.join(repoRoot, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const moduleOf = (file: string): string | null => {
  const parts = path.relative(src, file).split(path.sep);
  return parts[0] === 'modules' && parts.length > 2 ? parts[1]! : null;
};

describe('module boundaries', () => {
  it('no file imports another module except through its index.ts', () => {
    const deep: string[] = [];
    for (const file of sourceFiles(src)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = path.resolve(path.dirname(file), match[1]!);
        const targetModule = moduleOf(target);
        if (targetModule === null || targetModule === moduleOf(file)) continue;
        if (path.basename(target) !== 'index.ts') deep.push(`${path.relative(src, file)} → ${path.relative(src, target)}`);
      }
    }
    expect(deep).toEqual([]);
  });
});
