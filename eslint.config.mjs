// ESLint for both daemons, their tests, benches and doc tools (issue 15 item 6): typescript-eslint's
// recommended type-checked rules, which include no-floating-promises (a promise nobody awaits or
// catches loses its rejection). `npm run lint` runs it; `npm test` runs that first.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // packaging/ (the .deb build scripts, outside the TypeScript project like its esbuild-bundled
  // tool) is not linted yet.
  { ignores: ['dist*/', 'node_modules/', 'packaging/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Matches tsconfig's noUnusedParameters: a parameter a signature requires but the body does
      // not read is named with a leading underscore.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'all', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      // A variable assigned after closures that read it (a forward reference: the closure runs
      // only once the value is there) cannot be const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Tests assert on JSON documents read from the wire or from the store (`call().body`,
    // JSON.parse, objects whose fields are unknown): they reach into them as `any` and the
    // assertions check what is there. Typing every document's shape would only restate the
    // assertions, so in tests (and only there) `any` may be written and used. Every other rule,
    // no-floating-promises included, applies to tests as to the daemons.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (a test fixture run as a separate process, this file, the
    // dependency-cruiser rules): the JavaScript rules only, without type information.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    extends: [js.configs.recommended, tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', Buffer: 'readonly', __dirname: 'readonly' },
    },
  },
  { files: ['**/*.mjs'], languageOptions: { sourceType: 'module' } },
);
