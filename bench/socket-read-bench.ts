/**
 * socket-read-bench: what reading a telnet stream costs Node per megabyte, the way Horae's
 * sessions read now ('data' events: a fresh 64 KiB buffer per read, passed through the
 * stream machinery) against `onread` with one reused buffer. A lead for issue 3 (telnet is
 * bound by the main thread, and reading is ~35% of it). Usage:
 *
 *   npx tsx bench/socket-read-bench.ts [--mb 600] [--runs 3] [--out bench/results]
 *
 * One process: a loopback server writes `mb` MiB of telnet `put` lines (the devops frames
 * file when present, else generated lines) and a client socket reads them, counting lines
 * with `indexOf` as a framer would. Reported per mode: the process's CPU (both ends, the
 * writer's share is the same in both modes) and wall time per MB read, median of `runs`,
 * the modes alternating. Only a client socket can be given `onread` in Node 20: accepted
 * sockets would need the undocumented `handle` option to be rewrapped.
 *
 * Mode `onread-copy` is what a telnet session would have to do with a reused buffer: its
 * batches keep views of their lines until they are written, so each read is copied out
 * into 1 MiB slabs, here two recycled ones (a session would recycle a slab once no batch
 * holds lines in it; fresh slabs cost more than the 'data' events saved, 0.98 against
 * 0.93 ms/MB in one run, from the page faults of new memory). Mode `onread-alloc` copies
 * each read into a fresh buffer of its size instead (no recycling to get wrong).
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { environment, median, printHeader } from './harness.js';

const { values: args } = parseArgs({
  options: {
    mb: { type: 'string', default: '600' },
    runs: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results' },
  },
});

type Mode = 'data' | 'onread' | 'onread-copy' | 'onread-alloc';
interface Run { readonly mode: Mode; readonly mb: number; readonly lines: number; readonly cpuMsPerMb: number; readonly wallMsPerMb: number }

/** 64 MiB of put lines: the head of the devops telnet frames file, or made up. */
function source(): Buffer {
  const src = Buffer.alloc(64 << 20);
  const file = path.join(process.env['HORAE_BENCH_DATA'] ?? path.join(os.tmpdir(), 'horae-bench-data'), 'devops-100h-8640s-2dec-seed20260101-b5000.telnet.frames');
  if (existsSync(file)) {
    const fd = openSync(file, 'r');
    readSync(fd, src, 0, src.length, 0);
    closeSync(fd);
    return src;
  }
  let o = 0;
  for (let i = 0; o < src.length - 200; i++) o += src.write(`put cpu.usage_user ${1767225600 + i} ${(i % 10000) / 100} hostname=host_${i % 100} region=eu-west-1 datacenter=eu-west-1a rack=${i % 7}\n`, o);
  return src.subarray(0, o);
}

function once(mode: Mode, src: Buffer, total: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((s) => {
      let sent = 0;
      const go = (): void => {
        while (sent < total) {
          sent += src.length;
          if (!s.write(src)) {
            s.once('drain', go);
            return;
          }
        }
        s.end();
      };
      go();
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      let got = 0;
      let lines = 0;
      const count = (b: Buffer, n: number): void => {
        for (let i = b.indexOf(10); i !== -1 && i < n; i = b.indexOf(10, i + 1)) lines++;
      };
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const done = (): void => {
        const c = process.cpuUsage(c0);
        const mb = got / 1e6;
        server.close();
        resolve({ mode, mb: Math.round(mb), lines, cpuMsPerMb: (c.user + c.system) / 1000 / mb, wallMsPerMb: (performance.now() - t0) / mb });
      };
      if (mode === 'data') {
        const s = net.connect(port, '127.0.0.1');
        s.on('data', (b: Buffer) => {
          got += b.length;
          count(b, b.length);
        });
        s.on('end', done);
        s.on('error', reject);
      } else if (mode === 'onread-alloc') {
        const buf = Buffer.allocUnsafe(64 * 1024);
        const s = net.connect({ port, host: '127.0.0.1', onread: { buffer: buf, callback: (n: number, b: Uint8Array) => {
          const copy = Buffer.allocUnsafeSlow(n);
          copy.set(b.subarray(0, n), 0);
          got += n;
          count(copy, n);
          return true;
        } } });
        s.on('end', done);
        s.on('error', reject);
      } else if (mode === 'onread-copy') {
        const buf = Buffer.allocUnsafe(64 * 1024);
        const slabs = [Buffer.allocUnsafeSlow(1 << 20), Buffer.allocUnsafeSlow(1 << 20)];
        let which = 0;
        let at = 0;
        const s = net.connect({ port, host: '127.0.0.1', onread: { buffer: buf, callback: (n: number, b: Uint8Array) => {
          if (at + n > slabs[which]!.length) {
            which ^= 1;
            at = 0;
          }
          const slab = slabs[which]!;
          slab.set(b.subarray(0, n), at);
          got += n;
          count(slab.subarray(at, at + n), n);
          at += n;
          return true;
        } } });
        s.on('end', done);
        s.on('error', reject);
      } else {
        const buf = Buffer.allocUnsafe(64 * 1024);
        const s = net.connect({ port, host: '127.0.0.1', onread: { buffer: buf, callback: (n: number, b: Uint8Array) => { got += n; count(b as Buffer, n); return true; } } });
        s.on('end', done);
        s.on('error', reject);
      }
    });
  });
}

async function main(): Promise<void> {
  const env = environment(os.tmpdir());
  const header = { ...env, benchmark: 'socket reads: data events vs onread with a reused buffer, without and with the copy a session needs', mb: Number(args.mb), runs: Number(args.runs) };
  printHeader(header);
  const src = source();
  const total = Number(args.mb) << 20;
  const runs: Run[] = [];
  for (let r = 0; r < Number(args.runs); r++) {
    for (const mode of (r % 2 === 0 ? ['data', 'onread', 'onread-copy', 'onread-alloc'] : ['onread-alloc', 'onread-copy', 'onread', 'data']) as Mode[]) {
      const x = await once(mode, src, total);
      runs.push(x);
      console.log(`run ${r + 1} ${mode.padEnd(12)}: ${x.mb} MB, ${x.lines} lines, CPU ${x.cpuMsPerMb.toFixed(3)} ms/MB, wall ${x.wallMsPerMb.toFixed(3)} ms/MB`);
    }
  }
  const summary = (['data', 'onread', 'onread-copy', 'onread-alloc'] as Mode[]).map((mode) => {
    const xs = runs.filter((x) => x.mode === mode);
    return { mode, cpuMsPerMb: Math.round(median(xs.map((x) => x.cpuMsPerMb)) * 1000) / 1000, wallMsPerMb: Math.round(median(xs.map((x) => x.wallMsPerMb)) * 1000) / 1000 };
  });
  for (const s of summary) console.log(`median ${s.mode.padEnd(12)}: CPU ${s.cpuMsPerMb} ms/MB, wall ${s.wallMsPerMb} ms/MB`);
  mkdirSync(args.out, { recursive: true });
  const file = path.join(args.out, `socket-read-${String(env['commit'])}.json`);
  writeFileSync(file, `${JSON.stringify({ header, runs, summary }, null, 1)}\n`);
  console.log(`wrote ${file}`);
}

await main();
