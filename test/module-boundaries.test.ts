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

/** Every relative import of a file, as the absolute path it names. */
const importsOf = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)].map((match) =>
    path.resolve(path.dirname(file), match[1]!),
  );

const moduleOf = (file: string): string | null => {
  const parts = path.relative(src, file).split(path.sep);
  return parts[0] === 'modules' && parts.length > 2 ? parts[1]! : null;
};

describe('module boundaries', () => {
  it('no file imports another module except through its index.ts', () => {
    const deep: string[] = [];
    for (const file of sourceFiles(src)) {
      for (const target of importsOf(file)) {
        const targetModule = moduleOf(target);
        if (targetModule === null || targetModule === moduleOf(file)) continue;
        if (path.basename(target) !== 'index.ts')
          deep.push(`${path.relative(src, file)} → ${path.relative(src, target)}`);
      }
    }
    expect(deep).toEqual([]);
  });

  /**
   * docs/architecture.md "Sources as plugins": the kit (contract) and common/ (libraries several
   * plugins share) are the SDK, and a plugin builds on it alone, so that adding, changing or
   * removing one source never reaches into another.
   */
  it('a source plugin imports only its own folder, the kit, common/, lib/ and db/; the SDK imports no plugin', () => {
    const sources = path.join(src, 'modules', 'sources');
    const sdk = ['kit', 'common'];
    /** The plugin folder a file sits in, or null for the SDK and the sources module's own files. */
    const pluginOf = (file: string): string | null => {
      const parts = path.relative(sources, file).split(path.sep);
      return parts.length > 1 && parts[0] !== '..' && !sdk.includes(parts[0]!) ? parts[0]! : null;
    };
    const within = (file: string, dir: string) => !path.relative(dir, file).startsWith('..');
    const shared = [...sdk.map((name) => path.join(sources, name)), path.join(src, 'lib'), path.join(src, 'db')];
    const wrong: string[] = [];
    for (const file of sourceFiles(sources)) {
      const plugin = pluginOf(file);
      const inSdk = sdk.some((name) => within(file, path.join(sources, name)));
      for (const target of importsOf(file)) {
        const allowed =
          plugin !== null
            ? within(target, path.join(sources, plugin)) || shared.some((dir) => within(target, dir))
            : !inSdk || pluginOf(target) === null;
        if (!allowed) wrong.push(`${path.relative(src, file)} → ${path.relative(src, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
