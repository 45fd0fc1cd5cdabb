// Development-only bootstrap: when Horae runs from its TypeScript sources (vitest, tsx),
// the job worker thread registers tsx's loader here, then loads job-worker.ts. Builds run
// the compiled job-worker.js directly and never load this file.
import { register } from 'tsx/esm/api';

register();
await import('./job-worker.ts');
