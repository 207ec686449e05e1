// Type-aware lint for the bugs that matter (STYLE.md §9): floating promises, conditions the types say
// cannot vary, deprecated APIs, exhaustive switches, unused code, `any` leaking into the product's code.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'data/**', 'eslint.config.mjs', 'jest.config.js'] },
  ...tseslint.configs.recommendedTypeChecked,
  // Plain JavaScript and declaration modules have no TypeScript program to check against.
  { files: ['**/*.mts', '**/*.mjs', '**/*.js', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unnecessary-condition': 'error',
      '@typescript-eslint/no-deprecated': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      // `==` only for the deliberate `x == null` (null or undefined); everything else is strict.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A body on its own line takes braces; `if (done) return;` on one line needs none.
      curly: ['error', 'multi-line'],
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    // Tests read JSON bodies (`res.body`, parsed SSE events) that are `any` by nature; the unsafe-`any`
    // family stays on for the product's code and off here. Every other type-aware rule applies to tests.
    files: ['test/**/*.ts', '**/*.spec.ts', '**/*.spec.tsx', '**/*.e2e-spec.ts', 'bench/**/*.ts'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
