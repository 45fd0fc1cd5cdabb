/**
 * Builds the web UI: every `ui/src/pages/<page>/main.ts` (with the CSS it imports) is
 * bundled by esbuild into `ui/dist/<page>/main-<hash>.js` / `.css`, and the page's
 * `index.html` is copied with its `./main.js` / `./main.css` references rewritten to the
 * hashed files under `/ui/<page>/`. Hashed names let the server mark assets immutable;
 * the HTML itself is served with `no-cache`.
 *
 * Safe to run concurrently (two test files building at once): every file is written to a
 * temporary name and renamed into place, and the same sources give the same names.
 * Stale hashed files of a page are removed after its new files are in place.
 *
 * Run: `node ui/build.mjs` (part of `npm run build`), or import { buildUi }.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const UI_DIR = dirname(fileURLToPath(import.meta.url));

/** Pages found under ui/src/pages: each directory holding a main.ts and an index.html. */
export function findPages(srcDir = join(UI_DIR, 'src', 'pages')) {
  if (!existsSync(srcDir)) return [];
  return readdirSync(srcDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(srcDir, d.name, 'main.ts')))
    .map((d) => d.name)
    .sort();
}

function writeAtomic(path, contents) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}

/**
 * Bundles every page. Returns, per page, the files written (relative to outDir).
 * Throws with esbuild's messages when a page fails to build, or when a page has no
 * index.html.
 */
export async function buildUi(options = {}) {
  const srcDir = options.srcDir ?? join(UI_DIR, 'src', 'pages');
  const outDir = options.outDir ?? join(UI_DIR, 'dist');
  const minify = options.minify ?? true;
  const pages = findPages(srcDir);
  const result = {};
  for (const page of pages) {
    const htmlPath = join(srcDir, page, 'index.html');
    if (!existsSync(htmlPath)) throw new Error(`ui build: page "${page}" has main.ts but no index.html`);
    const built = await esbuild.build({
      entryPoints: { main: join(srcDir, page, 'main.ts') },
      bundle: true,
      format: 'esm',
      target: 'es2022',
      platform: 'browser',
      minify,
      sourcemap: 'linked',
      entryNames: '[name]-[hash]',
      assetNames: '[name]-[hash]',
      outdir: join(outDir, page),
      write: false,
      logLevel: 'silent',
      legalComments: 'none',
    });
    const written = [];
    let js;
    let css;
    for (const f of built.outputFiles) {
      writeAtomic(f.path, f.contents);
      const name = basename(f.path);
      written.push(relative(outDir, f.path));
      if (name.endsWith('.js')) js = name;
      if (name.endsWith('.css')) css = name;
    }
    let html = readFileSync(htmlPath, 'utf8');
    html = html.replace('./main.js', `/ui/${page}/${js}`);
    if (css !== undefined) html = html.replace('./main.css', `/ui/${page}/${css}`);
    else html = html.replace(/<link[^>]*href="\.\/main\.css"[^>]*>\s*/, '');
    writeAtomic(join(outDir, page, 'index.html'), html);
    written.push(join(page, 'index.html'));
    const keep = new Set(written.map((w) => basename(w)));
    for (const name of readdirSync(join(outDir, page))) {
      if (!keep.has(name) && !name.includes('.tmp-')) rmSync(join(outDir, page, name), { force: true });
    }
    result[page] = written;
  }
  return result;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  buildUi().then(
    (r) => {
      const pages = Object.keys(r);
      process.stdout.write(`ui: built ${pages.length} page(s) (${pages.join(', ')}) into ui/dist in ${Date.now() - started} ms\n`);
    },
    (err) => {
      process.stderr.write(`ui build failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}
