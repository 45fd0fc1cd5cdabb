/**
 * The telnet parse worker thread: PutChunkParser (parsed-chunk.ts) driven by messages
 * from parse-pool.ts. Messages are handled in the order they were posted, so a chunk is
 * parsed with every series taught before it, and a `reset` separates two generations of
 * series numbers. Each `data` message is answered by exactly one parsed chunk.
 */
import { parentPort } from 'node:worker_threads';
import { PutChunkParser } from './parsed-chunk.js';

export type ParseWorkerIn =
  | { readonly t: 'data'; readonly conn: number; readonly chunk: Uint8Array; readonly maxLineBytes: number }
  | { readonly t: 'close'; readonly conn: number }
  | { readonly t: 'learn'; readonly gen: number; readonly keys: Uint8Array; readonly keyEnds: Int32Array; readonly metricLengths: Int32Array; readonly refs: Int32Array }
  | { readonly t: 'reset'; readonly gen: number }
  /** Tests only: throws in the worker (an uncaught error ends the thread). */
  | { readonly t: 'crash' };

const port = parentPort;
if (port === null) throw new Error('parse-worker.ts runs as a worker thread');
const parser = new PutChunkParser();
port.on('message', (m: ParseWorkerIn) => {
  switch (m.t) {
    case 'data': {
      const out = parser.parse(m.conn, m.chunk, m.maxLineBytes);
      port.postMessage(out, [out.buf]);
      return;
    }
    case 'close': return parser.close(m.conn);
    case 'learn': return parser.learn(m.gen, m.keys, m.keyEnds, m.metricLengths, m.refs);
    case 'reset': return parser.reset(m.gen);
    case 'crash': throw new Error('parse worker: crash requested (test)');
  }
});
