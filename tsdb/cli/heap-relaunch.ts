/**
 * `horae serve` under the heap limit of its memory budget (memory/budget.ts): V8 takes
 * its heap limit at start only, so bin/horae.js runs the server in a child node started
 * with `--max-old-space-size` (3/4 of horae.memory.budget_bytes, in MiB). The parent
 * forwards SIGINT, SIGTERM and SIGHUP to the child and ends with the child's exit status,
 * so stopping the PID `npm start` gave stops the server; if the parent dies without a
 * word (SIGKILL), the child sees its IPC channel close and kills itself at once, as the
 * parent was (followParent), so nothing is left holding the data directory.
 *
 * Not relaunched: other commands than serve, `--help`, a command line or config that
 * does not parse (the server reports it), a heap limit given by hand (node's
 * --max-old-space-size in the arguments or NODE_OPTIONS: the operator's choice wins), and
 * the child itself (HORAE_HEAP_LIMIT_MB is set).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { DEFAULT_TSDB_CONFIG } from '../config.js';
import { heapLimitMb } from '../memory/budget.js';
import { parseServeCommand } from './args.js';
import type { Env } from './args.js';

/** Set in the child's environment: the heap limit it was started with, in MiB. */
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
 * Runs `node [execArgv] --max-old-space-size=MB script argv` with this process' stdio and
 * environment; resolves with the status to exit with (128 + signal number when the child
 * was killed by a signal).
 */
export function runWithHeapLimit(script: string, argv: readonly string[], mb: number): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, `--max-old-space-size=${mb}`, script, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [HEAP_LIMIT_ENV]: String(mb) },
  });
  const handlers = FORWARDED.map((sig) => [sig, () => void child.kill(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  return new Promise((resolve) => {
    const done = (status: number): void => {
      for (const [sig, h] of handlers) process.off(sig, h);
      resolve(status);
    };
    child.on('error', (err) => {
      process.stderr.write(`horae: cannot start the server with its heap limit: ${err.message}\n`);
      done(1);
    });
    child.on('exit', (code, signal) => done(code ?? 128 + (signal === null ? 0 : constants.signals[signal] ?? 0)));
  });
}

/** In the relaunched child: when the parent is gone (its IPC channel closed), end at once. */
export function followParent(): void {
  if (process.env[HEAP_LIMIT_ENV] === undefined || process.channel === undefined) return;
  process.channel.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}
