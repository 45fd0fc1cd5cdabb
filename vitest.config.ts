import { defineConfig } from 'vitest/config';

// One run, every test: `npm test`. Long-running benchmarks live in bench/, not here.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    env: { HORAE_INVARIANTS: '1' },
  },
});
