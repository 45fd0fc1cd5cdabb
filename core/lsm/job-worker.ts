/**
 * Worker-thread entry for flushes and compactions (job-runner.ts). Each message is one job;
 * the reply carries the new file's metadata or a serialized error.
 *
 * When the thread has had no job for IDLE_COLLECT_MS after one, it runs one full garbage
 * collection: a flush job holds the memstore's slabs (SharedArrayBuffers, shared with the
 * writing thread), freed only once every thread that saw them has collected them, and a
 * thread gone quiet allocates nothing that would make V8 collect.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort } from 'node:worker_threads';
import { NodeFileSystem } from '../fs/node-fs.js';
import { StoreError } from '../api/errors.js';
import type { Job } from './jobs.js';
import { runJob } from './jobs.js';

const IDLE_COLLECT_MS = 5_000;
const fs = new NodeFileSystem();
let running = 0;
let idleTimer: ReturnType<typeof setTimeout> | undefined;
let gc: (() => void) | undefined;

function collectWhenIdle(): void {
  if (idleTimer !== undefined) clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    idleTimer = undefined;
    if (running > 0) return;
    if (gc === undefined) {
      setFlagsFromString('--expose_gc');
      gc = runInNewContext('gc') as () => void;
    }
    gc();
  }, IDLE_COLLECT_MS);
  idleTimer.unref();
}

parentPort!.on('message', (msg: { id: number; job: Job }) => {
  running++;
  runJob(fs, msg.job).then(
    (result) => parentPort!.postMessage({ id: msg.id, result }),
    (err: unknown) => {
      const e = err as Error;
      parentPort!.postMessage({
        id: msg.id,
        error: {
          code: err instanceof StoreError ? err.code : undefined,
          message: e?.message ?? String(err),
          retryable: err instanceof StoreError ? err.retryable : false,
        },
      });
    },
  ).finally(() => {
    if (--running === 0) collectWhenIdle();
  });
});
