/**
 * Composition root of the `horae` command: every command but `serve` runs in
 * cli/run-cli.ts; `serve` (the default) opens the embedded store on the data directory
 * and serves HTTP and telnet on one port until SIGTERM/SIGINT, then shuts down
 * gracefully: stop accepting, finish in-flight writes, stop background work, flush and
 * close the store.
 */
import { resolve } from 'node:path';
import { openEmbeddedStore } from '../core/index.js';
import { NodeFileSystem } from '../core/fs/node-fs.js';
import { testFileSystem } from '../core/fs/test-fs.js';
import { parseServeCommand } from './cli/args.js';
import { loadTokenAuth } from './cli/auth-file.js';
import { openRemoteStore } from './cli/open-store.js';
import { processIo, runCli } from './cli/run-cli.js';
import { startServer } from './server/server.js';
import { checkBeforeOpen, walProblems } from './server/store-check.js';
import { DEFAULT_TSDB_CONFIG } from './config.js';
import { applyMemoryBudget } from './memory/budget.js';
import { onStopSignal } from './cli/heap-limit.js';
import { VERSION } from './version.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const code = await runCli(argv, process.env, processIo());
  if (code !== undefined) {
    process.exitCode = code;
    return;
  }
  const s = parseServeCommand(argv, process.env);
  for (const w of s.warnings) process.stderr.write(`warning: ${w}\n`);
  // Every memory bound not set on its own takes its share of the budget (memory/budget.ts).
  applyMemoryBudget(s.tsdb.memoryBudgetBytes ?? DEFAULT_TSDB_CONFIG.memoryBudgetBytes, s.store, s.tsdb);
  // Before the store opens: a bad tokens file stops the start with its file:line.
  const auth = loadTokenAuth({ authTokensFile: s.tsdb.authTokensFile ?? '', authTokens: s.tsdb.authTokens ?? '' },
    (w) => process.stderr.write(`warning: ${w}\n`));
  const dataDir = resolve(s.dataDir);
  const log = (msg: string): void => void process.stderr.write(`horae: ${msg}\n`);
  // A damaged MANIFEST stops the start before the store opens; damaged WAL records are
  // named by the store's recovery as it opens (server/store-check.ts).
  const before = s.storeUrl !== undefined ? { problems: [], fatal: undefined } : await checkBeforeOpen(dataDir);
  if (before.fatal !== undefined) throw new Error(before.fatal);
  // HORAE_TEST_FS (tests only; core/fs/test-fs.ts) swaps in a fault-injecting file system.
  const fs = testFileSystem(process.env, dataDir, new NodeFileSystem());
  // --store URL: a remote store (cli/open-store.ts) instead of the embedded one.
  const store = s.storeUrl !== undefined
    ? await openRemoteStore(s.storeUrl)
    : await openEmbeddedStore({ dir: dataDir, ...s.store, ...(fs === undefined ? {} : { fs }) });
  const server = await startServer({
    store,
    port: s.port,
    bind: s.bind,
    config: s.tsdb,
    log,
    ...(auth === undefined ? {} : { auth }),
    damagedFiles: [...before.problems, ...(await walProblems(store))],
  });
  console.log(`horae ${VERSION} listening on ${server.address}:${server.port} (HTTP and telnet), data in ${s.storeUrl ?? dataDir}`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`horae: ${signal}: shutting down\n`);
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`horae: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  // On the main thread, or on the thread bin/horae.js runs the server on (cli/heap-limit.ts).
  onStopSignal(stop);
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${resolve(process.argv[1])}`).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`horae: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
