/**
 * The model test's checks of /api/query/last, /api/search/lookup and /api/suggest against
 * the reference (reference-store.ts). Each returns the first difference, or undefined.
 */
import type { ReferenceStore, Tags } from './reference-store.js';
import { seriesKey } from './reference-store.js';
import type { World } from './tsdb-model-gen.js';
import { http } from './tsdb-model-wire.js';

interface LastAnswer { metric: string; tags: Tags; timestamp: number; value: string }

/**
 * /api/query/last against the reference. Points before `keptFromMs` have expired
 * (retention): where the reference's newest point is one of them, there is no answer.
 */
export async function checkLast(port: number, ref: ReferenceStore, metric: string, tags: Tags, backScan: number, nowMs: number, keptFromMs: number): Promise<string | undefined> {
  const body = JSON.stringify({ queries: [{ metric, tags }], resolveNames: true, backScan });
  const rep = await http(port, 'POST', '/api/query/last', body);
  // An unknown metric fails; unknown tag names match nothing (or fail).
  if (!ref.names.metric.has(metric)) return rep.status === 400 || rep.status === 404 ? undefined : `unknown metric: ${rep.status} ${rep.text.slice(0, 300)}, want an error`;
  const unknown = Object.entries(tags).some(([k, v]) => !ref.names.tagk.has(k) || !ref.names.tagv.has(v));
  if (unknown) return rep.status === 400 || rep.status === 404 || rep.text === '[]' ? undefined : `unknown tags: ${rep.status} ${rep.text.slice(0, 300)}, want none or an error`;
  if (rep.status !== 200) return `${rep.status} ${rep.text.slice(0, 300)}`;
  const got = JSON.parse(rep.text) as LastAnswer[];
  const want = ref.last(metric, tags, backScan, nowMs);
  const gotBy = new Map(got.map((g) => [seriesKey(g.metric, g.tags), g]));
  if (gotBy.size !== got.length) return `a series answered twice: ${rep.text.slice(0, 300)}`;
  for (const w of want) {
    const k = seriesKey(w.metric, w.tags);
    const g = gotBy.get(k);
    const p = w.point;
    const wantText = p.int ? String(p.big) : String(p.v);
    gotBy.delete(k);
    if (p.t < keptFromMs) {
      if (g !== undefined) return `${k}: ${g.timestamp} ${g.value}, want no answer (expired before ${keptFromMs})`;
      continue;
    }
    if (g === undefined) return `${k}: no answer, want ${p.t} ${wantText}`;
    const sameValue = p.int ? /^-?\d+$/.test(g.value) && BigInt(g.value) === p.big : /[.E]/.test(g.value) && Number(g.value) === p.v;
    if (g.timestamp !== p.t || !sameValue) return `${k}: ${g.timestamp} ${g.value}, want ${p.t} ${wantText}`;
  }
  if (gotBy.size > 0) return `unexpected answers: ${[...gotBy.values()].map((g) => `${seriesKey(g.metric, g.tags)} ${g.timestamp} ${g.value}`).join('; ')}`;
  return undefined;
}

/** /api/search/lookup against the reference: with a retention, only series holding a point within it. */
export async function checkLookup(port: number, ref: ReferenceStore, world: World, log: string[], step: number, keptFrom: (metric: string) => number, nowMs: number): Promise<string | undefined> {
  const r = world.r;
  const metric = r.chance(0.1) ? '*' : world.pick(world.metrics);
  const patterns: Array<{ key: string; value: string }> = [];
  for (let i = r.int(3); i > 0; i--) {
    const s = world.pick(world.series);
    const keys = Object.keys(s.tags);
    const key = keys[r.int(keys.length)]!;
    patterns.push({ key, value: r.chance(0.3) ? '*' : s.tags[key]! });
  }
  if (metric === '*' && patterns.length === 0) patterns.push({ key: 'host', value: '*' });
  const body = JSON.stringify({ metric, tags: patterns, limit: 100_000 });
  log.push(`${step}: lookup ${body}`);
  if (metric !== '*' && !ref.names.metric.has(metric)) return undefined; // unknown names: not the model's business
  if (patterns.some((p) => !ref.names.tagk.has(p.key) || (p.value !== '*' && !ref.names.tagv.has(p.value)))) return undefined;
  const rep = await http(port, 'POST', '/api/search/lookup', body);
  if (rep.status !== 200) return `lookup: ${rep.status} ${rep.text.slice(0, 300)}`;
  const got = (JSON.parse(rep.text) as { results: Array<{ metric: string; tags: Tags }> }).results.map((x) => seriesKey(x.metric, x.tags)).sort();
  const want = ref.lookup(metric, patterns)
    .filter((x) => keptFrom(x.metric) === -Infinity || ref.last(x.metric, x.tags, 0, nowMs).some((l) => seriesKey(l.metric, l.tags) === seriesKey(x.metric, x.tags) && l.point.t >= keptFrom(x.metric)))
    .map((x) => seriesKey(x.metric, x.tags)).sort();
  return JSON.stringify(got) === JSON.stringify(want) ? undefined : `lookup: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
}

export async function checkSuggest(port: number, ref: ReferenceStore, world: World, log: string[], step: number): Promise<string | undefined> {
  const r = world.r;
  const kind = world.pick(['metric', 'tagk', 'tagv'] as const);
  const q = world.pick(['', 'd', 'w', 'm', 'c', 'web0', 's']);
  const max = 1 + r.int(10);
  const path = `/api/suggest?type=${kind === 'metric' ? 'metrics' : kind}&q=${q}&max=${max}`;
  log.push(`${step}: suggest ${path}`);
  const rep = await http(port, 'GET', path);
  if (rep.status !== 200) return `suggest: ${rep.status} ${rep.text.slice(0, 300)}`;
  const got = JSON.parse(rep.text) as string[];
  const want = ref.suggest(kind, q, max);
  return JSON.stringify(got) === JSON.stringify(want) ? undefined : `suggest ${path}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
}
