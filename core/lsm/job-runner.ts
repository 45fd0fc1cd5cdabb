/**
 * Where flushes and compactions run. `InlineJobRunner` runs them on the calling thread
 * (the in-memory and fault-injecting file systems live there); `WorkerJobRunner` runs them
 * on worker threads with their own NodeFileSystem, so building and merging SSTs uses the
 * second core while the main thread keeps taking writes and serving reads.
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FileSystem } from '../fs/fs.js';
import { StoreError, STORE_ERROR_CODES } from '../api/errors.js';
import type { StoreErrorCode } from '../api/errors.js';
import type { Job, JobResult } from './jobs.js';
import { runJob } from './jobs.js';

export interface JobRunner {
  run(job: Job): Promise<JobResult>;
  close(): Promise<void>;
}

export class InlineJobRunner implements JobRunner {
  private readonly fs: FileSystem;

  constructor(fs: FileSystem) {
    this.fs = fs;
  }

  run(job: Job): Promise<JobResult> {
    return runJob(this.fs, job);
  }

  async close(): Promise<void> {}
}

interface Pending {
  resolve: (r: JobResult) => void;
  reject: (e: Error) => void;
}

/** Serialized form of an error crossing the thread boundary. */
export interface WireError {
  readonly code?: string;
  readonly message: string;
  readonly retryable?: boolean;
}

export function errorFromWire(w: WireError): Error {
  if (w.code !== undefined && (STORE_ERROR_CODES as readonly string[]).includes(w.code)) {
    return new StoreError(w.code as StoreErrorCode, w.message, { retryable: w.retryable ?? false });
  }
  return new StoreError('STORE_IO', w.message);
}

function workerEntry(): { url: URL; execArgv: string[] } {
  const js = new URL('./job-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return { url: js, execArgv: [] };
  // Running from TypeScript sources (tests, tsx): a bootstrap registers tsx in the worker.
  return { url: new URL('./job-worker-tsx.mjs', import.meta.url), execArgv: [] };
}

export class WorkerJobRunner implements JobRunner {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly busy: number[] = [];
  private nextId = 1;
  private closed = false;

  constructor(threads: number) {
    const { url, execArgv } = workerEntry();
    for (let i = 0; i < Math.max(1, threads); i++) {
      const w = new Worker(url, { execArgv });
      w.unref();
      w.on('message', (msg: { id: number; result?: JobResult; error?: WireError }) => {
        const p = this.pending.get(msg.id);
        if (p === undefined) return;
        this.pending.delete(msg.id);
        this.busy[i] = this.busy[i]! - 1;
        if (msg.error !== undefined) p.reject(errorFromWire(msg.error));
        else p.resolve(msg.result);
      });
      w.on('error', (err) => this.failAll(err));
      this.workers.push(w);
      this.busy.push(0);
    }
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(new StoreError('STORE_IO', `background worker failed: ${err.message}`, { cause: err }));
    this.pending.clear();
  }

  run(job: Job): Promise<JobResult> {
    if (this.closed) return Promise.reject(new StoreError('STORE_CLOSED', 'job runner is closed'));
    let best = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.busy[i]! < this.busy[best]!) best = i;
    const id = this.nextId++;
    this.busy[best] = this.busy[best]! + 1;
    return new Promise<JobResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A flush's index is transferred; its slabs are shared memory (neither is copied).
      const transfer = job.kind === 'flush' ? [job.index.buffer as ArrayBuffer] : [];
      this.workers[best]!.postMessage({ id, job }, transfer);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failAll(new Error('closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
