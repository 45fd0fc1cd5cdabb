/**
 * Child process for kill9.test.ts: writes rows as fast as it can with 4 concurrent writers
 * (synced and buffered batches), with flushes and compactions running, and prints
 * "ack <round> <first> <count>" for every batch acknowledged as synced, until killed.
 */
import { openEmbeddedStore } from '../../core/embedded/embedded-store.js';
import { utf8 } from '../../core/api/bytes.js';

const [dir, round] = process.argv.slice(2) as [string, string];
const store = await openEmbeddedStore({
  dir, memstoreFlushBytes: 256 * 1024, compactionMinFiles: 3, regionSplitBytes: 4 << 20, walFileBytes: 1 << 20,
});
const t = await store.createTable(
  { name: 'k9', families: [{ name: 'f' }], splitPoints: [utf8('r4'), utf8('r8')] },
  { ifNotExists: true },
);
let next = 0;
const BATCH = 50;

export function rowKey(round: string, id: number): Uint8Array {
  return utf8(`r${id % 10}-${round}-${id}`);
}

async function writer(w: number): Promise<never> {
  for (let i = 0; ; i++) {
    const first = next;
    next += BATCH;
    const rows = [];
    for (let id = first; id < first + BATCH; id++) {
      rows.push({ key: rowKey(round, id), mutations: [{ type: 'put' as const, family: 'f', qualifier: utf8('v'), value: utf8(`value-${round}-${id}`) }] });
    }
    const sync = (i + w) % 3 !== 0;
    await t.mutate(rows, { durability: sync ? 'sync' : 'buffered' });
    if (sync) process.stdout.write(`ack ${round} ${first} ${BATCH}\n`);
  }
}

process.stdout.write('ready\n');
await Promise.all([0, 1, 2, 3].map(writer));
