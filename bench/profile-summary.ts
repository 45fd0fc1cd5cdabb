/**
 * Summarizes V8 .cpuprofile files (from `core-bench.ts --profile DIR` or `node --cpu-prof`):
 * the top functions by self time, with their share of all samples, and optionally by
 * inclusive (total) time. Usage:
 *
 *   npx tsx bench/profile-summary.ts [--top N] [--total] file.cpuprofile...
 *
 * Several files are merged (e.g. the runs of one workload).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
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

/** Adds self and inclusive microseconds per function name of one profile. */
function accumulate(p: Profile, self: Map<string, number>, total: Map<string, number>): number {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
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

function print(title: string, m: Map<string, number>, all: number, top: number): void {
  console.log(`${title} (${(all / 1e6).toFixed(2)} s sampled)`);
  const rows = [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of rows) console.log(`${((100 * us) / all).toFixed(1).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, total: { type: 'boolean', default: false } },
});
const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
for (const f of positionals) all += accumulate(JSON.parse(readFileSync(f, 'utf8')) as Profile, self, total);
print('self time', self, all, Number(values.top));
if (values.total) print('\ntotal time', total, all, Number(values.top));
