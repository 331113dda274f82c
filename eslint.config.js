import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

/** Imports that would tie the pure core to a platform (DESIGN §1). */
const coreForbidden = [
  { group: ['react', 'react-dom', 'react/*', 'react-dom/*'], message: 'src/core stays free of React.' },
  { group: ['zustand', 'zustand/*', 'recharts', 'comlink', 'dexie'], message: 'src/core stays free of UI and worker libraries.' },
  { group: ['onnxruntime-*', 'onnxruntime-*/*'], message: 'src/core stays free of onnxruntime; adapters live in src/runtime.' },
  { group: ['**/runtime/**', '**/app/**', '**/cli/**'], message: 'src/core may not import from runtime, app or cli.' },
  { group: ['node:*', 'fs', 'path', 'worker_threads', 'os', 'child_process'], message: 'src/core runs in browsers too: no Node built-ins.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'e2e/artifacts/**', 'runs/**', 'coverage/**', 'scratch/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx,js,mjs}'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/app/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    files: ['src/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: coreForbidden }] },
  },
);
