#!/usr/bin/env node
// Runs the compiled server (npm run build writes dist/). `npm start` builds first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/tsdb/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('horae: not built yet; run `npm run build` (or `npm start`) first\n');
  process.exit(1);
}
process.argv[1] = main;
await import(main);
