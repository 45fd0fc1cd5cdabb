/**
 * Summarizes V8 .cpuprofile files (from `core-bench.ts --profile DIR` or `node --cpu-prof`):
 * the top functions by self time, with their share of all samples, and optionally by
 * inclusive (total) time. Usage:
 *
 *   npx tsx bench/profile-summary.ts [--top N] [--total] [--lines] file.cpuprofile...
 *
 * Several files are merged (e.g. the runs of one workload). --lines adds the hottest
 * source lines of each listed function (lines of the JS that ran: use the tsc output from
 * bench/build.sh, since tsx's transform does not keep line numbers). Lines of a callee that
 * V8 inlined carry the callee's own line numbers, which may be in another file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
  readonly positionTicks?: readonly { readonly line: number; readonly ticks: number }[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url === '' ? '' : ` ${path.relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}`;
  return `${functionName === '' ? '(anonymous)' : functionName}${file}`;
}

/** Adds self and inclusive microseconds per function name of one profile, and line ticks. */
function accumulate(p: Profile, self: Map<string, number>, total: Map<string, number>, lines: Map<string, Map<number, number>>): number {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  for (const n of p.nodes) {
    const name = frameName(n);
    let m = lines.get(name);
    if (m === undefined) lines.set(name, (m = new Map()));
    for (const t of n.positionTicks ?? []) m.set(t.line, (m.get(t.line) ?? 0) + t.ticks);
  }
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  let all = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + dt);
    all += dt;
  }
  for (const [id, us] of selfUs) {
    const name = frameName(byId.get(id)!);
    self.set(name, (self.get(name) ?? 0) + us);
    // Inclusive: every distinct function on the stack once.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = frameName(byId.get(cur)!);
      if (seen.has(f)) continue;
      seen.add(f);
      total.set(f, (total.get(f) ?? 0) + us);
    }
  }
  return all;
}

function print(title: string, m: Map<string, number>, all: number, top: number, lines?: Map<string, Map<number, number>>): void {
  console.log(`${title} (${(all / 1e6).toFixed(2)} s sampled)`);
  const rows = [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows) {
    console.log(`${((100 * us) / all).toFixed(1).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
    const ticks = lines?.get(name);
    if (ticks === undefined || ticks.size === 0) continue;
    let sum = 0;
    for (const t of ticks.values()) sum += t;
    const hot = [...ticks].sort((a, b) => b[1] - a[1]).slice(0, 3);
    console.log(`${' '.repeat(19)}hot lines: ${hot.map(([l, t]) => `${l} (${Math.round((100 * t) / sum)}%)`).join(', ')}`);
  }
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    total: { type: 'boolean', default: false },
    lines: { type: 'boolean', default: false },
  },
});
const self = new Map<string, number>();
const total = new Map<string, number>();
const lines = new Map<string, Map<number, number>>();
let all = 0;
for (const f of positionals) all += accumulate(JSON.parse(readFileSync(f, 'utf8')) as Profile, self, total, lines);
print('self time', self, all, Number(values.top), values.lines ? lines : undefined);
if (values.total) print('\ntotal time', total, all, Number(values.top));
