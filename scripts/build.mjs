/**
 * Builds what `npm start` and `bin/horae.js` run, with esbuild alone (a runtime
 * dependency, so a production install — `npm install --omit=dev`, no TypeScript — builds
 * too): every `.ts` file of core/ and tsdb/ is transpiled one to one into dist/ (the same
 * layout as `tsc -p tsconfig.build.json`, so the worker threads find their `.js` files
 * beside their pools), then the modules a thread starts from are rebuilt in place as single
 * files (BUNDLED, `bundle`), then the web UI is bundled (ui/build.mjs). Types are not checked
 * here: that is `npm run typecheck` (and `npm test`).
 *
 * Runs from the `prepare` script, so `npm install` builds once; `npm start` then runs the
 * build as it is. `dist/BUILD.json` records when the build ran; `isStale` tells whether a
 * source file changed since (a dev checkout after an edit or a `git checkout`).
 *
 * Run: `node scripts/build.mjs` (= `npm run build`), or import { build, isStale }.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
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
 * The modules a thread starts from: the server (main.js, on the heap-limited thread), the
 * process' main thread of `bin/horae.js` (heap-limit.js), the flush/compaction worker and
 * the query decode worker. Each is rebuilt in place as one self-contained file.
 */
/** esbuild options of both builds (one-to-one and bundled). */
const ESBUILD_COMMON = { platform: 'node', format: 'esm', target: 'node20', sourcemap: 'linked', logLevel: 'silent', write: true };

const BUNDLED = ['tsdb/main.ts', 'tsdb/cli/heap-limit.ts', 'core/lsm/job-worker.ts', 'tsdb/query/decode-worker.ts'];

/**
 * Rebuilds `entry`'s output (dist/<entry>.js) as one file holding it and everything it
 * imports, its npm dependencies included (lz4-napi, a native addon, stays outside). Loading
 * ~200 modules of ours and ~100 of fastify's one by one was most of a start's CPU (resolve,
 * read, compile each: ~0.3 of ~0.6 CPU-s to the first answer, measured 2026-12-07). A
 * source's `import.meta.url` becomes the URL of its own one-to-one output, so paths found
 * from it (worker scripts beside their pools, the UI, a transform's module for the job
 * worker) are the same as in the one-to-one build.
 */
async function bundle(esbuild, root, entry) {
  const outfile = join(root, 'dist', entry.replace(/\.ts$/, '.js'));
  const ownUrl = {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const own = join(root, 'dist', relative(root, args.path).replace(/\.ts$/, '.js'));
        let rel = relative(dirname(outfile), own).split(sep).join('/');
        if (!rel.startsWith('.')) rel = `./${rel}`;
        return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'ts' };
      });
    },
  };
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    external: ['lz4-napi', 'esbuild'],
    // CommonJS dependencies (fastify's) call require(): give the bundle one.
    banner: { js: "import { createRequire as __horaeCreateRequire } from 'node:module'; const require = __horaeCreateRequire(import.meta.url);" },
    plugins: [ownUrl],
    ...ESBUILD_COMMON,
  });
  if (result.errors.length > 0) throw new Error(result.errors.map((e) => e.text).join('\n'));
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
    ...ESBUILD_COMMON,
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
  for (const entry of BUNDLED) await bundle(esbuild, root, entry);
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
