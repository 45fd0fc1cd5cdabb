/**
 * bin/horae.js without the build step, for tests under tsx: `horae serve` run on a worker
 * thread with the heap limit of its memory budget (tsdb/cli/heap-limit.ts).
 */
import { fileURLToPath } from 'node:url';
import { heapRelaunchMb, runWithHeapLimit } from '../../../tsdb/cli/heap-limit.js';

const main = fileURLToPath(new URL('../../../tsdb/main.ts', import.meta.url));
const bootstrap = fileURLToPath(new URL('../../../tsdb/cli/serve-thread-tsx.mjs', import.meta.url));
const args = process.argv.slice(2);
const mb = heapRelaunchMb(args, process.env, process.execArgv);
if (mb === undefined) throw new Error('expected a heap limit');
process.exit(await runWithHeapLimit(main, args, mb, bootstrap));
