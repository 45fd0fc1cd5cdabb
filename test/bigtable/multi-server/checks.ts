/**
 * The multi-server suite's check, run after every phase: every server answers queries
 * (every series of each metric, and each series alone by literal filters), /api/query/last,
 * /api/search/lookup and /api/suggest with exactly the model's points and names, and every
 * server's answer is byte for byte the others' (lookup's `time` field aside). Differences
 * are collected as short problems (where two answers first differ), not thrown, so one
 * run shows every phase that went wrong.
 */
import type { HoraeProcess } from './horae-process.js';
import { seriesKey, sortedPoints, valueText } from './model.js';
import type { Model, ModelSeries } from './model.js';

export interface Window {
  /** Seconds. */
  readonly start: number;
  readonly end: number;
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Problems found: each says what differed from what, where they first differ. */
export type Problems = string[];

/** Adds a problem when `got` and `want` (as JSON) differ. */
function compare(problems: Problems, what: string, got: unknown, want: unknown): boolean {
  const g = typeof got === 'string' ? got : JSON.stringify(got);
  const w = typeof want === 'string' ? want : JSON.stringify(want);
  if (g === w) return true;
  let i = 0;
  while (i < g.length && i < w.length && g[i] === w[i]) i++;
  const at = Math.max(0, i - 60);
  problems.push(`${what}: at ${i} got …${g.slice(at, i + 80)}… expected …${w.slice(at, i + 80)}…`);
  return false;
}

/** Runs one request on every server; a problem for each answer unlike the first server's (after `normalize`). */
async function same(problems: Problems, servers: readonly HoraeProcess[], what: string, method: string, path: string, body?: unknown, normalize = (s: string) => s): Promise<Answer> {
  const answers = await Promise.all(servers.map((s) => s.http(method, path, body)));
  const first = { status: answers[0]!.status, body: normalize(answers[0]!.body) };
  for (let i = 1; i < answers.length; i++) {
    const a = { status: answers[i]!.status, body: normalize(answers[i]!.body) };
    compare(problems, `${what}: ${servers[i]!.name} vs ${servers[0]!.name}`, `${a.status} ${a.body}`, `${first.status} ${first.body}`);
  }
  return first;
}

interface QuerySeries {
  readonly metric: string;
  readonly tags: Record<string, string>;
  readonly dps: Record<string, number>;
}

function expectedDps(s: ModelSeries): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of sortedPoints(s)) out[String(p.ts)] = p.value;
  return out;
}

/** Checks every server against the model; the problems found, each starting with `phase`. */
export async function checkAll(model: Model, servers: readonly HoraeProcess[], win: Window, phase: string): Promise<Problems> {
  const problems: Problems = [];
  const metrics = model.metrics();
  for (const metric of metrics) {
    // Every series of the metric, each on its own (aggregator none).
    const q = { start: win.start, end: win.end, queries: [{ aggregator: 'none', metric }] };
    const a = await same(problems, servers, `${phase}: query ${metric}`, 'POST', '/api/query', q);
    const want = model.seriesOf(metric);
    if (want.length === 0) {
      compare(problems, `${phase}: query ${metric}`, `${a.status} ${a.body}`, '200 []');
    } else if (compare(problems, `${phase}: query ${metric} status`, a.status, 200)) {
      const got = (JSON.parse(a.body) as QuerySeries[]).map((s) => ({ key: seriesKey(s.metric, s.tags), dps: s.dps }));
      const exp = want.map((s) => ({ key: seriesKey(s.metric, s.tags), dps: expectedDps(s) }));
      const byKey = (x: { key: string }, y: { key: string }): number => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);
      compare(problems, `${phase}: every series of ${metric}`, got.sort(byKey), exp.sort(byKey));
    }
    // Each series alone, by literal filters on all its tags (the index's exact-row path).
    await Promise.all(want.map(async (s) => {
      const filters = Object.entries(s.tags).map(([tagk, filter]) => ({ type: 'literal_or', tagk, filter, groupBy: false }));
      const one = { start: win.start, end: win.end, queries: [{ aggregator: 'sum', metric, filters }] };
      const b = await same(problems, servers, `${phase}: query ${seriesKey(metric, s.tags)}`, 'POST', '/api/query', one);
      if (!compare(problems, `${phase}: ${seriesKey(metric, s.tags)} alone: status`, b.status, 200)) return;
      const got = JSON.parse(b.body) as QuerySeries[];
      compare(problems, `${phase}: ${seriesKey(metric, s.tags)} alone`, got.map((x) => x.dps), [expectedDps(s)]);
    }));
    // The newest point of each series.
    const last = await same(problems, servers, `${phase}: last ${metric}`, 'POST', '/api/query/last', { queries: [{ metric, tags: {} }], resolveNames: true });
    if (!compare(problems, `${phase}: last ${metric}: status`, last.status, 200)) continue;
    const gotLast = (JSON.parse(last.body) as Array<{ timestamp: number; value: string; metric: string; tags: Record<string, string> }>)
      .map((p) => `${seriesKey(p.metric, p.tags)} ${p.timestamp} ${p.value}`).sort();
    const wantLast = want.map((s) => {
      const p = sortedPoints(s).at(-1)!;
      return `${seriesKey(s.metric, s.tags)} ${p.ts * 1000} ${valueText(p)}`;
    }).sort();
    compare(problems, `${phase}: newest points of ${metric}`, gotLast, wantLast);
    // The series index: every series ever written under the metric's name.
    const lookup = await same(problems, servers, `${phase}: lookup ${metric}`, 'POST', '/api/search/lookup', { metric, tags: [], limit: 0 }, dropTime);
    if (!compare(problems, `${phase}: lookup ${metric}: status`, lookup.status, 200)) continue;
    const gotSeries = (JSON.parse(lookup.body) as { results: Array<{ metric: string; tags: Record<string, string> }> }).results.map((r) => seriesKey(r.metric, r.tags)).sort();
    compare(problems, `${phase}: lookup ${metric}`, gotSeries, model.indexedOf(metric).map((s) => seriesKey(s.metric, s.tags)).sort());
  }
  // Every series of every metric, and every name of each kind.
  const all = await same(problems, servers, `${phase}: lookup *`, 'POST', '/api/search/lookup', { metric: '*', tags: [], limit: 0 }, dropTime);
  const allSeries = all.status !== 200 ? [all.body] : (JSON.parse(all.body) as { results: Array<{ metric: string; tags: Record<string, string> }> }).results.map((r) => seriesKey(r.metric, r.tags)).sort();
  compare(problems, `${phase}: lookup *`, allSeries, [...model.series.values()].map((s) => seriesKey(s.metric, s.tags)).sort());
  for (const kind of ['metrics', 'tagk', 'tagv'] as const) {
    const sug = await same(problems, servers, `${phase}: suggest ${kind}`, 'GET', `/api/suggest?type=${kind}&q=&max=10000`);
    const names = model.names[kind === 'metrics' ? 'metric' : kind];
    compare(problems, `${phase}: suggest ${kind}`, `${sug.status} ${sug.body}`, `200 ${JSON.stringify([...names].sort(byBytes))}`);
  }
  return problems;
}

/** Lookup answers carry the time they took. */
function dropTime(body: string): string {
  return body.replace(/"time":[0-9.e+-]+,/, '');
}

function byBytes(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}
