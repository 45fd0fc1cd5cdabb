#!/bin/sh
# Compiles core/ and bench/ with tsc into $OUT (default /tmp/horae-bench-build), so the
# benchmarks can run as plain JS, like production (`npm run build`). Under tsx, esbuild's
# keepNames wraps every closure created at run time in a __name() call, which costs
# 5-12% on the read paths (bench/README.md). Then: node "$OUT/bench/core-bench.js" ...
set -e
OUT=${OUT:-/tmp/horae-bench-build}
cd "$(dirname "$0")/.."
npx tsc -p bench/tsconfig.build.json --outDir "$OUT"
ln -sfn "$PWD/node_modules" "$OUT/node_modules"
echo '{ "type": "module" }' > "$OUT/package.json"
echo "built $OUT; run: node $OUT/bench/core-bench.js [flags]"
