/**
 * Real-browser test harness: Debian's chromium driven by playwright-core, against a real
 * Horae server on 127.0.0.1 with an embedded store in a temp directory.
 *
 *   const h = await startBrowserHarness();          // builds ui/dist once per process
 *   await h.putPoints([{ metric, timestamp, value, tags }]);
 *   const page = await h.newPage();
 *   await page.goto(h.url('/#m=sum:sys.cpu'));
 *   await h.screenshot(page, 'dashboard');           // test-artifacts/dashboard.png
 *   await h.close();                                  // in afterAll: browser, server, dirs
 *
 * Every page's uncaught exceptions and console errors are collected in `h.pageErrors`, so a
 * test can assert the page ran cleanly. close() is idempotent and never throws on a
 * half-started harness, so it is safe in afterAll even when beforeAll failed midway.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { openEmbeddedStore } from '../../core/index.js';
import type { TsdbConfig } from '../../tsdb/config.js';
import { startServer } from '../../tsdb/server/server.js';
import type { RunningServer } from '../../tsdb/server/server.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS_DIR = join(REPO_ROOT, 'test-artifacts');
export const CHROMIUM_PATH = process.env['HORAE_CHROMIUM'] ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** One point as /api/put takes it (timestamp in seconds or milliseconds). */
export interface PutPoint {
  readonly metric: string;
  readonly timestamp: number;
  readonly value: number;
  readonly tags: Readonly<Record<string, string>>;
}

export interface BrowserHarnessOptions {
  /** Server config overrides (e.g. a smaller max query size). */
  readonly config?: Partial<TsdbConfig>;
  /** Viewport of new pages; default 1280×800. */
  readonly viewport?: { width: number; height: number };
}

export interface BrowserHarness {
  readonly server: RunningServer;
  readonly context: BrowserContext;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly dataDir: string;
  /** Uncaught page exceptions and console errors of every page, as "<page url>: <text>". */
  readonly pageErrors: string[];
  /** baseUrl + path. */
  url(path: string): string;
  newPage(): Promise<Page>;
  /** POSTs the points to /api/put?sync in chunks; throws with the server's body on failure. */
  putPoints(points: readonly PutPoint[]): Promise<void>;
  /** Full-page PNG at test-artifacts/<name>.png; returns the path. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

let uiBuild: Promise<void> | undefined;

/** Runs `node ui/build.mjs` once per test process (the build itself is safe to run concurrently). */
export function ensureUiBuilt(): Promise<void> {
  uiBuild ??= promisify(execFile)(process.execPath, [join(REPO_ROOT, 'ui', 'build.mjs')], { cwd: REPO_ROOT, timeout: 60_000 }).then(
    () => undefined,
    (err: unknown) => {
      const e = err as { stderr?: string; message: string };
      throw new Error(`ui build failed: ${e.stderr ?? e.message}`);
    },
  );
  return uiBuild;
}

export async function startBrowserHarness(options: BrowserHarnessOptions = {}): Promise<BrowserHarness> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`chromium not found at ${CHROMIUM_PATH}: apt-get install chromium (or set HORAE_CHROMIUM)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'horae-browser-data-'));
  const profileDir = mkdtempSync(join(tmpdir(), 'horae-browser-profile-'));
  const pageErrors: string[] = [];
  let server: RunningServer | undefined;
  let context: BrowserContext | undefined;
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    try {
      await context?.close();
    } finally {
      try {
        await server?.stop();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        rmSync(profileDir, { recursive: true, force: true });
      }
    }
  };
  try {
    await ensureUiBuilt();
    const store = await openEmbeddedStore({ dir: dataDir });
    server = await startServer({ store, port: 0, bind: '127.0.0.1', ...(options.config === undefined ? {} : { config: options.config }) });
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: options.viewport ?? { width: 1280, height: 800 },
      timeout: 30_000,
    });
    context.setDefaultTimeout(10_000);
  } catch (err) {
    await close();
    throw err;
  }
  const srv = server;
  const ctx = context;
  const baseUrl = `http://127.0.0.1:${srv.port}`;
  return {
    server: srv,
    context: ctx,
    baseUrl,
    dataDir,
    pageErrors,
    url: (path) => baseUrl + path,
    async newPage() {
      const page = await ctx.newPage();
      page.on('pageerror', (e) => pageErrors.push(`${page.url()}: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`${page.url()}: console: ${m.text()}`);
      });
      return page;
    },
    async putPoints(points) {
      for (let i = 0; i < points.length; i += 5000) {
        const res = await fetch(`${baseUrl}/api/put?sync`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(points.slice(i, i + 5000)),
        });
        if (res.status !== 204) throw new Error(`put failed: HTTP ${res.status}: ${await res.text()}`);
      }
    },
    async screenshot(page, name) {
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      const path = join(ARTIFACTS_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    close,
  };
}
