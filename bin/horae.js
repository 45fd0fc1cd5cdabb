#!/usr/bin/env node
// The `horae` command and `npm start`: runs the build in dist/ (scripts/build.mjs, run by
// `npm install` through the `prepare` script), compiling nothing on the way up. In a dev
// checkout whose sources changed since the build, it says so and rebuilds first (esbuild,
// under a second); HORAE_NO_REBUILD=1 refuses instead.
import { fileURLToPath } from 'node:url';
import { build, isStale } from '../scripts/build.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const main = fileURLToPath(new URL('../dist/tsdb/main.js', import.meta.url));
const stale = isStale(root);
if (stale !== undefined) {
  const why = stale === 'dist/BUILD.json' ? 'dist/ has no build' : `${stale} changed after the last build`;
  if (process.env.HORAE_NO_REBUILD === '1') {
    process.stderr.write(`horae: ${why}; run \`npm run build\` first\n`);
    process.exit(1);
  }
  process.stderr.write(`horae: ${why}: rebuilding (npm run build) … `);
  try {
    const r = await build(root);
    // esbuild's service process would otherwise live (and hold its memory) as long as the server.
    await (await import('esbuild')).stop();
    process.stderr.write(`done in ${r.ms} ms\n`);
  } catch (err) {
    process.stderr.write(`failed:\n${err.message}\n`);
    process.exit(1);
  }
}
// `horae serve` runs on a worker thread with the heap limit of its memory budget
// (dist/tsdb/cli/heap-limit.js); signals are handed to it, its exit status is ours.
const { heapRelaunchMb, runWithHeapLimit } = await import(new URL('../dist/tsdb/cli/heap-limit.js', import.meta.url).href);
const args = process.argv.slice(2);
const mb = heapRelaunchMb(args, process.env, process.execArgv);
if (mb !== undefined) process.exit(await runWithHeapLimit(main, args, mb));
process.argv[1] = main;
await import(main);
