/**
 * Opens a remote store named by URL (`--store` / HORAE_STORE); without one, commands use
 * the embedded store in the data directory. Known schemes:
 *
 *     bigtable://PROJECT/INSTANCE[?prefix=TABLE_PREFIX&appProfile=PROFILE]
 *
 * The Bigtable backend is its own package (backends/bigtable) that the default install
 * leaves out; it is loaded here, by path, only when asked for. Run from sources (tsx,
 * vitest) its TypeScript is loaded; from dist/ its build (`npm run build:bigtable`).
 * The emulator: BIGTABLE_EMULATOR_HOST=host:port. Credentials: as the Google client
 * library reads them (GOOGLE_APPLICATION_CREDENTIALS, gcloud application-default login).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Store } from '../../core/api/store.js';

/** A store URL that cannot be opened as asked (exit status 1, message shown). */
export class StoreUrlError extends Error {
  override readonly name = 'StoreUrlError';
}

/** What the backend package exports (backends/bigtable/src/index.ts). */
interface BigtableModule {
  parseBigtableUrl(url: string): object;
  openBigtableStore(opts: object): Promise<Store>;
}

const HERE = fileURLToPath(import.meta.url);
const FROM_SOURCE = HERE.endsWith('.ts');
/** The repository root: tsdb/cli/ from sources, dist/tsdb/cli/ when built. */
const ROOT = resolve(dirname(HERE), FROM_SOURCE ? '../..' : '../../..');
const BIGTABLE_DIR = join(ROOT, 'backends/bigtable');

export const BIGTABLE_INSTALL_HINT =
  '--store bigtable://… needs the Bigtable backend, which the default install leaves out: run `npm run install:bigtable` ' +
  '(installs @google-cloud/bigtable 6.x into backends/bigtable and builds it)';

/**
 * Opens the store at `url`; rejects with StoreUrlError for unknown schemes or a missing
 * backend. `backendDir` (tests) replaces backends/bigtable.
 */
export async function openRemoteStore(url: string, backendDir = BIGTABLE_DIR): Promise<Store> {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'bigtable') {
    throw new StoreUrlError(`unknown store URL ${JSON.stringify(url)}: expected bigtable://PROJECT/INSTANCE[?prefix=P&appProfile=A]`);
  }
  const mod = await loadBigtable(backendDir);
  let opts: object;
  try {
    opts = mod.parseBigtableUrl(url);
  } catch (err) {
    throw new StoreUrlError((err as Error).message);
  }
  return mod.openBigtableStore(opts);
}

async function loadBigtable(dir: string): Promise<BigtableModule> {
  if (!existsSync(join(dir, 'node_modules/@google-cloud/bigtable/package.json'))) throw new StoreUrlError(BIGTABLE_INSTALL_HINT);
  const entry = FROM_SOURCE
    ? join(dir, 'src/index.ts')
    : join(dir, 'dist/backends/bigtable/src/index.js');
  if (!existsSync(entry)) throw new StoreUrlError(`the Bigtable backend is installed but not built: run \`npm run build:bigtable\` (${entry} is missing)`);
  if (!FROM_SOURCE && newestMtime(join(dir, 'src')) > statSync(entry).mtimeMs) {
    throw new StoreUrlError('the Bigtable backend\'s build is older than its sources: run `npm run build:bigtable`');
  }
  return (await import(pathToFileURL(entry).href)) as BigtableModule;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const f of readdirSync(dir)) newest = Math.max(newest, statSync(join(dir, f)).mtimeMs);
  return newest;
}
