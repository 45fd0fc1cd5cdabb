// Development-only bootstrap: when Horae runs from its TypeScript sources (vitest, tsx),
// the telnet parse worker registers tsx's loader here, then loads parse-worker.ts.
// Builds run the compiled parse-worker.js directly and never load this file.
import { register } from 'tsx/esm/api';

register();
await import('./parse-worker.ts');
