// Development-only bootstrap: when `horae serve` runs from its TypeScript sources (tests
// under tsx) on its heap-limited thread (heap-limit.ts runWithHeapLimit), the thread
// registers tsx's loader here, then loads the server's module as its entry point.
// Builds run dist/tsdb/main.js on the thread directly and never load this file.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
process.argv[1] = workerData.script;
await import(workerData.script);
