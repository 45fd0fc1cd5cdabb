// Development-only bootstrap: when Horae runs from its TypeScript sources (vitest, tsx),
// the query decode worker registers tsx's loader here, then loads decode-worker.ts.
// Builds run the compiled decode-worker.js directly and never load this file.
import { register } from 'tsx/esm/api';

register();
await import('./decode-worker.ts');
