/**
 * `horae serve` under the heap limit of its memory budget (memory/budget.ts): V8 takes an
 * isolate's heap limit when the isolate is made, so bin/horae.js runs the server on a
 * worker thread of its own process, made with `resourceLimits.maxOldGenerationSizeMb` of
 * 3/4 of horae.memory.budget_bytes (in MiB). One process, not a second node: a node
 * process costs ~55 MiB of RSS and ~0.15 CPU-s to start, a worker thread's isolate a few
 * MiB. The main thread only waits: it hands SIGINT, SIGTERM and SIGHUP to the server
 * (onStopSignal) and ends with the server's exit status (1, with the reason, when the
 * server thread dies of an error or of its heap limit).
 *
 * Not run this way: other commands than serve, `--help`, a command line or config that
 * does not parse (the server reports it), a heap limit given by hand (node's
 * --max-old-space-size in the arguments or NODE_OPTIONS: the operator's choice wins), and
 * the server thread itself (HORAE_HEAP_LIMIT_MB is set).
 */
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { DEFAULT_TSDB_CONFIG } from '../config.js';
import { heapLimitMb } from '../memory/budget.js';
import { parseServeCommand } from './args.js';
import type { Env } from './args.js';

/** Set in the server thread's environment: the heap limit it was made with, in MiB. */
export const HEAP_LIMIT_ENV = 'HORAE_HEAP_LIMIT_MB';
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The heap limit in MiB `argv` (a horae command line) should run under, or undefined to run here as is. */
export function heapRelaunchMb(argv: readonly string[], env: Env, execArgv: readonly string[]): number | undefined {
  if (env[HEAP_LIMIT_ENV] !== undefined) return undefined;
  if (execArgv.some((a) => a.startsWith('--max-old-space-size')) || (env.NODE_OPTIONS ?? '').includes('--max-old-space-size')) return undefined;
  const cmd = argv[0];
  if (cmd !== undefined && cmd !== 'serve' && !cmd.startsWith('-')) return undefined;
  try {
    const s = parseServeCommand(argv, env);
    if (s.help) return undefined;
    return heapLimitMb(s.tsdb.memoryBudgetBytes ?? DEFAULT_TSDB_CONFIG.memoryBudgetBytes);
  } catch {
    return undefined;
  }
}

/**
 * Runs `script argv` (a module that starts when it is process.argv[1]) on a worker thread
 * whose old space is limited to `mb` MiB, with this process' stdio and environment;
 * resolves with the status to exit with. `bootstrap`: a module the thread loads instead,
 * which sets up a loader and imports `script` itself (tests under tsx).
 */
export function runWithHeapLimit(script: string, argv: readonly string[], mb: number, bootstrap?: string): Promise<number> {
  const worker = new Worker(pathToFileURL(bootstrap ?? script), {
    argv: [...argv],
    env: { ...process.env, [HEAP_LIMIT_ENV]: String(mb) },
    workerData: { script },
    resourceLimits: { maxOldGenerationSizeMb: mb },
  });
  const handlers = FORWARDED.map((sig) => [sig, () => worker.postMessage({ signal: sig })] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  let failed = false;
  return new Promise((resolve) => {
    worker.on('error', (err: Error & { code?: string }) => {
      failed = true;
      const why = err.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `the server ran out of its heap limit (${mb} MiB, 3/4 of horae.memory.budget_bytes)`
        : err.stack ?? err.message;
      process.stderr.write(`horae: ${why}\n`);
    });
    worker.on('exit', (code) => {
      for (const [sig, h] of handlers) process.off(sig, h);
      resolve(failed && code === 0 ? 1 : code);
    });
  });
}

/**
 * Calls `stop` with the signal's name on SIGINT and SIGTERM: from the process on the main
 * thread, from runWithHeapLimit's messages on the server thread (signals reach only the
 * main thread), where SIGHUP, which ends a process by default, stops the server too.
 */
export function onStopSignal(stop: (signal: string) => void): void {
  if (isMainThread || parentPort === null) {
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    return;
  }
  parentPort.on('message', (m: { signal?: string }) => {
    if (typeof m?.signal === 'string') stop(m.signal);
  });
  parentPort.unref();
}
