/**
 * The web UI, served from the bundle `ui/build.mjs` writes to `ui/dist/`:
 *
 *   GET /            → ui/dist/dashboard/index.html   (Cache-Control: no-cache)
 *   GET /operator    → ui/dist/operator/index.html    (Cache-Control: no-cache)
 *   GET /ui/<page>/<file> → that file; hashed names (`main-3F2A….js`) are immutable
 *
 * Only plain file names inside `ui/dist/<page>/` are served: a path segment that is empty,
 * `.`/`..` (also percent-encoded), holds a backslash or NUL, or names a directory or a
 * symlink out of the tree gets 404. When the bundle is missing the page routes answer 503
 * with how to build it, so `npm start` on a checkout without `ui/dist` says what is wrong.
 * Responses carry an ETag (size + mtime) and answer If-None-Match with 304.
 */
import { existsSync, realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface UiRoutesOptions {
  /** The built bundle; default: `ui/dist` of the package this file belongs to. */
  readonly distDir?: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** A name with a content hash, as esbuild's `[name]-[hash]` writes it: safe to cache forever. */
const HASHED = /-[A-Z0-9]{8}\.[a-z0-9]+(\.map)?$/;
const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Walks up from this file to the directory with package.json (the repo, or the installed package). */
export function defaultUiDistDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'ui', 'dist');
    const up = dirname(dir);
    if (up === dir) return join(process.cwd(), 'ui', 'dist');
    dir = up;
  }
}

/** True when `segment` may name a file or page directory: no traversal, no separators, no hidden files. */
export function isSafeSegment(segment: string): boolean {
  return SAFE_SEGMENT.test(segment) && segment !== '.' && segment !== '..' && !segment.includes('..');
}

export function registerUiRoutes(app: FastifyInstance, options: UiRoutesOptions = {}): void {
  const distDir = options.distDir ?? defaultUiDistDir();

  const sendFile = async (req: FastifyRequest, reply: FastifyReply, page: string, file: string, isPage: boolean): Promise<unknown> => {
    if (!isSafeSegment(page) || !isSafeSegment(file)) return notFound(reply);
    const path = join(distDir, page, file);
    let st;
    try {
      st = await stat(path);
    } catch {
      if (isPage) return missingBundle(reply, distDir, page);
      return notFound(reply);
    }
    if (!st.isFile()) return notFound(reply);
    // NB: a symlink inside dist could point anywhere; only serve what really lies under distDir.
    const real = realpathSync(path);
    const root = realpathSync(distDir);
    if (!real.startsWith(root + sep)) return notFound(reply);
    const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    reply.header('etag', etag);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', !isPage && HASHED.test(file) ? 'public, max-age=31536000, immutable' : 'no-cache');
    reply.type(CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.send(await readFile(path));
  };

  for (const [url, page] of [['/', 'dashboard'], ['/operator', 'operator']] as const) {
    app.get(url, { config: { role: 'open' } }, (req, reply) => sendFile(req, reply, page, 'index.html', true));
  }
  // GET routes answer HEAD too (fastify's exposeHeadRoutes drops the body). Pages and
  // bundles hold no data: open (the API calls they make need a token).
  app.get('/ui/*', { config: { role: 'open' } }, (req, reply) => {
    // The raw URL, not fastify's decoded wildcard, so `%2e%2e` and `%2f` are seen as sent.
    const raw = (req.raw.url ?? '').split('?')[0] ?? '';
    const rest = raw.slice(raw.toLowerCase().indexOf('/ui/') + 4);
    const parts = rest.split('/');
    if (parts.length !== 2) return notFound(reply);
    let page: string;
    let file: string;
    try {
      page = decodeURIComponent(parts[0] ?? '');
      file = decodeURIComponent(parts[1] ?? '');
    } catch {
      return notFound(reply);
    }
    return sendFile(req, reply, page, file, false);
  });
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/plain; charset=utf-8').send('Not found\n');
}

function missingBundle(reply: FastifyReply, distDir: string, page: string): FastifyReply {
  return reply
    .code(503)
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send(
      `The web UI is not built: ${join(distDir, page, 'index.html')} is missing.\n` +
        `Build it with \`npm run build\` (or \`node ui/build.mjs\`); \`npm install\` and \`npm start\` build it when it is missing.\n`,
    );
}
