// Lint rules, and the workflow fence: code in workflows/ runs in Temporal's deterministic sandbox,
// so it may import values only from @temporalio/workflow (and types from anywhere).
// Type-aware rules read tsconfig.lint.json, which covers every linted file (scripts/ and bin/ too).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export const workflowFence = {
  files: ['workflows/**/*.ts', 'test/fixtures/lint/workflows/**/*.ts'],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: '^(?!@temporalio/workflow$|@temporalio/common$|\\./)',
            allowTypeImports: true,
            message: 'workflows/ may import values only from @temporalio/workflow (and other workflow files); import types with `import type`, and move side effects to activities/.',
          },
        ],
      },
    ],
    'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports in workflows/ (a default export becomes a catch-all workflow).' }],
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'bench/.tmp/**', 'test/fixtures/lint/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.lint.json', tsconfigRootDir: import.meta.dirname },
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      // A promise nobody awaits loses its rejection: in a Temporal codebase that is a silently
      // skipped activity or an unhandled rejection that kills the worker.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': 'error',
      // Prettier owns line breaks (it splits a call chain before `[`), and with semicolons always
      // printed there is no ASI hazard left for this rule to catch.
      'no-unexpected-multiline': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  workflowFence,
  {
    // The fence's fixtures are linted on their own by lint-fence.test.ts; the fence needs no
    // types, and building the whole program for one fixture made that test slow.
    files: ['test/fixtures/lint/**/*.ts'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { project: false, projectService: false } },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports in activities/.' }],
    },
  },
);
