import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'web/dist/', '.tmp/', 'test-results/', 'web/src/api/schema.gen.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Which better-sqlite3 build loads depends on the Node version (src/db/sqlite-native.ts).
    files: ['**/*.ts'],
    ignores: ['src/db/sqlite-native.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'better-sqlite3',
              allowTypeImports: true,
              message:
                'import { SqliteDatabase } from src/db/sqlite-native.ts: it loads the build that works on this Node',
            },
          ],
        },
      ],
    },
  },
  // A promise nobody awaits or catches turns a failed background task (a delivery log insert, a
  // counter flush) into an unhandled rejection, which ends the process: every one is awaited,
  // returned, or given a handler.
  {
    files: ['src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: true, attributes: false } }],
    },
  },
  // A function longer than a screenful or three mixes concerns; split it by responsibility (issue #22).
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 150 }] },
  },
  // The dashboard runs in the browser, with React's rules of hooks.
  {
    files: ['web/src/**/*.{ts,tsx}'],
    ...reactHooks.configs.flat.recommended,
    languageOptions: { globals: globals.browser },
  },
);
