/**
 * Builds what `npm start` and `bin/horae.js` run, with esbuild alone (a runtime
 * dependency, so a production install — `npm install --omit=dev`, no TypeScript — builds
 * too): every `.ts` file of core/ and tsdb/ is transpiled one to one into dist/ (the same
 * layout as `tsc -p tsconfig.build.json`, so the worker threads find their `.js` files
 * beside their pools), then the web UI is bundled (ui/build.mjs). Types are not checked
 * here: that is `npm run typecheck` (and `npm test`).
 *
 * Runs from the `prepare` script, so `npm install` builds once; `npm start` then runs the
 * build as it is. `dist/BUILD.json` records when the build ran; `isStale` tells whether a
 * source file changed since (a dev checkout after an edit or a `git checkout`).
 *
 * Run: `node scripts/build.mjs` (= `npm run build`), or import { build, isStale }.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Source trees of the server; ui/src is the web UI's. */
const SERVER_DIRS = ['core', 'tsdb'];
const STAMP = 'BUILD.json';

/** Every file under dir (relative to root), recursively. */
function walk(root, dir, out = []) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return out;
  for (const d of readdirSync(abs, { withFileTypes: true })) {
    const rel = join(dir, d.name);
    if (d.isDirectory()) walk(root, rel, out);
    else out.push(rel);
  }
  return out;
}

/** The server's TypeScript sources, relative to root. */
export function serverSources(root = ROOT) {
  return SERVER_DIRS.flatMap((d) => walk(root, d)).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).sort();
}

/**
 * The first source (server or UI) changed after the last build, or undefined when the
 * build is current; 'dist/BUILD.json' itself when there is no build.
 */
export function isStale(root = ROOT) {
  const stamp = join(root, 'dist', STAMP);
  if (!existsSync(stamp)) return `dist/${STAMP}`;
  const built = statSync(stamp).mtimeMs;
  const files = [...SERVER_DIRS.flatMap((d) => walk(root, d)), ...walk(root, 'ui/src'), 'ui/build.mjs', 'scripts/build.mjs', 'package.json'];
  for (const f of files) {
    const p = join(root, f);
    if (existsSync(p) && statSync(p).mtimeMs > built) return f;
  }
  return undefined;
}

/**
 * Transpiles the server into root/dist and bundles the UI. Files of an earlier build that
 * no source produces any more are removed. Returns the number of server files and the ms.
 */
export async function build(root = ROOT) {
  const started = performance.now();
  // Loaded here, not at the top: bin/horae.js imports isStale on every start.
  const esbuild = await import('esbuild');
  const { buildUi } = await import('../ui/build.mjs');
  const sources = serverSources(root);
  const out = join(root, 'dist');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: sources,
    outdir: out,
    outbase: root,
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'silent',
    write: true,
  });
  if (result.errors.length > 0) throw new Error(result.errors.map((e) => e.text).join('\n'));
  const keep = new Set(sources.flatMap((s) => {
    const js = s.replace(/\.ts$/, '.js');
    return [js, `${js}.map`];
  }));
  for (const d of SERVER_DIRS) {
    for (const f of walk(out, d)) {
      // tsc's declaration files (an older build) and files whose source is gone.
      if (!keep.has(f)) rmSync(join(out, f), { force: true });
    }
  }
  await buildUi({ srcDir: join(root, 'ui/src/pages'), outDir: join(root, 'ui/dist') });
  mkdirSync(out, { recursive: true });
  const tmp = join(out, `${STAMP}.tmp-${process.pid}`);
  writeFileSync(tmp, `${JSON.stringify({ builtAt: new Date().toISOString(), files: sources.length })}\n`);
  renameSync(tmp, join(out, STAMP));
  return { files: sources.length, ms: Math.round(performance.now() - started) };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  build().then(
    (r) => process.stdout.write(`horae: built ${r.files} server files into dist/ and the UI into ui/dist/ in ${r.ms} ms\n`),
    (err) => {
      process.stderr.write(`horae: build failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}
