/**
 * bin/horae.js without the build step, for tests under tsx: `horae serve` relaunched in a
 * child node with the heap limit of its memory budget (tsdb/cli/heap-relaunch.ts).
 */
import { fileURLToPath } from 'node:url';
import { heapRelaunchMb, runWithHeapLimit } from '../../../tsdb/cli/heap-relaunch.js';

const main = fileURLToPath(new URL('../../../tsdb/main.ts', import.meta.url));
const args = process.argv.slice(2);
const mb = heapRelaunchMb(args, process.env, process.execArgv);
if (mb === undefined) throw new Error('expected a relaunch');
process.exit(await runWithHeapLimit(main, args, mb));
