#!/bin/sh
# Builds the compiled JS of a commit (default HEAD) from `git archive`, away from the shared
# working tree and its uncommitted edits: /tmp/horae-snap-<sha>/ (sources) and
# /tmp/horae-snap-<sha>/build/ (tsc output, as bench/build.sh). Prints the build dir. Run the
# benchmarks from the repository root so results land in bench/results/ and the header
# records the commit, e.g.
#   B=$(bench/snapshot.sh) && BENCH_SOURCE="git archive $(git rev-parse --short HEAD)" node $B/bench/record.js --quick
# (Horae is then the snapshot's own `npm start`, on the dist/ built here as `npm install`
# builds it: bench/peers/targets.ts horaeDir)
set -e
cd "$(dirname "$0")/.."
REV=$(git rev-parse --short "${1:-HEAD}")
SRC=/tmp/horae-snap-$REV
if [ ! -f "$SRC/build/package.json" ]; then
  rm -rf "$SRC" && mkdir -p "$SRC"
  git archive "$REV" | tar -x -C "$SRC"
  ln -sfn "$PWD/node_modules" "$SRC/node_modules"
  # What `npm install` does (the prepare script): the snapshot's `npm start` runs this build.
  (cd "$SRC" && node scripts/build.mjs >&2)
  (cd "$SRC" && npx tsc -p bench/tsconfig.build.json --outDir "$SRC/build" >&2 || true)
  ln -sfn "$PWD/node_modules" "$SRC/build/node_modules"
  echo '{ "type": "module" }' > "$SRC/build/package.json"
  echo "$REV" > "$SRC/build/COMMIT"
fi
echo "$SRC/build"
