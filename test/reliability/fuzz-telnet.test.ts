/**
 * Fuzzes the telnet line protocol over a real socket: random text, `put` plus random
 * words, mutated put lines and lines of nasty tokens (FUZZ_LINES of them, seeded), with a
 * valid `put fz.good` line every GOOD_EVERY lines, sent in chunks each closed by a
 * `version` barrier. Checks:
 *  - the server neither crashes nor hangs: every barrier is answered, the connection stays
 *    open, /api/version answers at the end;
 *  - every reply line is a known one (a `put:` error, a command's answer), never an
 *    internal error, and each put line gets at most one;
 *  - accounting: put lines = error replies + points written, so no rejected line stored a
 *    point and no accepted one was dropped;
 *  - every good line beside the bad ones is stored, exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../tsdb/server/server.js';
import { NASTY, FUZZ_SEED, Random, mutate, pick, randomText } from './helpers/sec-fuzz.js';
import { NOW_MS, RawClient, httpText, rawRequest, startSecServer } from './helpers/sec-server.js';

const FUZZ_LINES = Number(process.env.FUZZ_LINES ?? 8000);
const GOOD_EVERY = 6;
const CHUNK = 300;
const TS = Math.floor(NOW_MS / 1000) - 3 * 3600;

const TEMPLATES = [
  `put fz.m ${TS} 42 host=web01 cpu=0`,
  `put fz.m ${TS}123 -1.5e3 host=web01`,
  `put fz.m ${TS}.250 7 host=a dc=lga`,
  `put fz.other ${TS} 1 a=b c=d e=f g=h i=j k=l m=n o=p q=r`,
  `put fz.m ${TS} 9223372036854775807 host=x`,
];
const KNOWN_REPLY = /^(put: (illegal argument|invalid value|unknown metric|unknown tag|authentication|permission)|net\.opentsdb\.tools |Built on |unknown command: |available commands: |[a-z.]+ \d+ [-\d.eE]+|ok$|startup$|Caches dropped\.$|\S+: error: |diediedie: disabled)/;

function fuzzLine(r: Random): string {
  let line: string;
  switch (r.int(10)) {
    case 0: case 1: case 2: case 3: line = mutate(r, pick(r, TEMPLATES)); break;
    case 4: case 5: line = `put ${randomText(r, r.int(80))}`; break;
    case 6: case 7: line = randomText(r, r.int(120)); break;
    default: line = ['put', ...Array.from({ length: r.int(9) }, () => pick(r, NASTY).slice(0, 200))].join(pick(r, [' ', '  ', '\t']));
  }
  // No embedded newlines (they would make two lines) and no command that ends the session.
  line = line.replace(/\n/g, ' ').slice(0, 3000);
  return /^\s*(exit|diediedie|auth)\b/.test(line) ? `x${line}` : line;
}

describe(`telnet fuzz (seed ${FUZZ_SEED})`, () => {
  let srv: RunningServer;
  beforeAll(async () => {
    srv = await startSecServer({ telnetMaxLineBytes: 4096 });
  });
  afterAll(async () => srv.stop());

  it(`${FUZZ_LINES} hostile lines: no crash or hang, one known reply at most per line, good lines stored`, async () => {
    const r = new Random(FUZZ_SEED);
    const before = { ...srv.listener.stats().telnet };
    const written0 = srv.tsdb.ingest.stats().pointsWritten;
    const c = await RawClient.open(srv.port);
    const good: Array<[number, number]> = [];
    let barriers = 0;
    let answered = 0;
    let scanFrom = 0;
    try {
      let sent = 0;
      while (sent < FUZZ_LINES) {
        const lines: string[] = [];
        for (let i = 0; i < CHUNK && sent < FUZZ_LINES; i++, sent++) {
          if (sent % GOOD_EVERY === 0) {
            const ts = TS + good.length;
            good.push([ts, good.length]);
            lines.push(`put fz.good ${ts} ${good.length - 1} host=h${good.length % 5}`);
          } else {
            lines.push(fuzzLine(r));
          }
        }
        c.write(Buffer.from(`${lines.join(pick(r, ['\n', '\r\n']))}\nversion\n`, 'latin1'));
        barriers++;
        await c.until((t) => {
          for (let i = t.indexOf('Built on ', scanFrom); i >= 0; i = t.indexOf('Built on ', i + 1)) { answered++; scanFrom = i + 1; }
          return answered >= barriers;
        }, 10_000);
        expect(c.closed, `closed after ${sent} lines; last chunk ${JSON.stringify(lines.slice(-3))}`).toBe(false);
      }
    } finally {
      c.destroy();
    }
    const replies = c.text.split('\n').filter((l) => l !== '');
    const unknown = replies.filter((l) => !KNOWN_REPLY.test(l));
    expect(unknown.slice(0, 5)).toEqual([]);
    const after = srv.listener.stats().telnet;
    const putLines = after.putLines - before.putLines;
    const putErrors = after.putErrors - before.putErrors;
    const written = srv.tsdb.ingest.stats().pointsWritten - written0;
    expect(replies.filter((l) => l.startsWith('put: ')).length).toBe(putErrors);
    // Every put line (those with too few words too) is answered or written.
    expect(putErrors + written).toBe(putLines);
    expect(replies.some((l) => l.startsWith('put: illegal argument: not enough arguments'))).toBe(true);
    expect(after.batchFailures - before.batchFailures).toBe(0);
    expect(putErrors).toBeGreaterThan(FUZZ_LINES / 3);

    // One result per host (sum would interpolate across them); merged, they are the good lines.
    const q = await rawRequest(srv.port, httpText('GET', `/api/query?start=${TS - 1}&end=${TS + good.length + 1}&m=sum:fz.good{host=*}`));
    expect(q.status).toBe(200);
    const stored = (JSON.parse(q.body) as Array<{ dps: Record<string, number> }>)
      .flatMap((res) => Object.entries(res.dps).map(([t, v]) => [Number(t), v] as [number, number]))
      .sort((a, b) => a[0] - b[0]);
    expect(stored).toEqual(good);
    expect((await rawRequest(srv.port, httpText('GET', '/api/version'))).status).toBe(200);
  }, 60_000);
});
