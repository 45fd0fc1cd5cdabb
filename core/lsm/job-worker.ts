/**
 * Worker-thread entry for flushes and compactions (job-runner.ts). Each message is one job;
 * the reply carries the new file's metadata or a serialized error.
 */
import { parentPort } from 'node:worker_threads';
import { NodeFileSystem } from '../fs/node-fs.js';
import { StoreError } from '../api/errors.js';
import type { Job } from './jobs.js';
import { runJob } from './jobs.js';

const fs = new NodeFileSystem();

parentPort!.on('message', (msg: { id: number; job: Job }) => {
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
  );
});
