/**
 * The time-series model test's runner: one seeded operation log against a real server
 * (startServer on a loopback port, driven over HTTP and telnet; imports as `horae import`
 * runs them, tsdb/cli/import.ts, with the server stopped) and against the plain reference
 * (reference-store.ts). One fake clock drives the server, the import and the store.
 *
 * Operations: puts over telnet, HTTP JSON and msgpack and the import path (late points,
 * duplicate timestamps, integers and floats, s and ms timestamps); queries, /api/query/last,
 * lookup and suggest, compared point for point; delete queries, series and metric deletes;
 * UID renames; restarts; store maintenance (flush, minor and major compaction) and cache
 * drops; with retention, expired hours left out of comparisons and gone after a major
 * compaction; on a deployment with an
 * error-injecting file system, transient I/O errors, which must surface as errors (5xx with
 * a message, a telnet error line) and never as a wrong answer or a lost acknowledged point:
 * a failed write is retried (after a restart when the store stopped writes) as a client does.
 *
 * A divergence fails with the seed, the step and its operation, the first difference and
 * the operations before it; TEST_SEED=<seed> replays that seed alone, and TSDB_MODEL_LOG=<file>
 * writes every operation of the failed run to that file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack } from 'msgpackr';
import type { Store } from '../../../core/api/store.js';
import type { ErrorFileSystem, FsOpKind } from '../../../core/fs/error-fs.js';
import { parseConfigText } from '../../../tsdb/cli/config-file.js';
import { checkImportFiles, compactAfterImport, importFiles } from '../../../tsdb/cli/import.js';
import { startServer } from '../../../tsdb/server/server.js';
import type { RunningServer } from '../../../tsdb/server/server.js';
import { baseTimeOfKey } from '../../../tsdb/schema/row-key.js';
import { DATA_FAMILY } from '../../../tsdb/tables.js';
import { Tsdb } from '../../../tsdb/tsdb.js';
import { ReferenceStore, seriesKey } from './reference-store.js';
import type { RefFilter, RefQuery, Tags } from './reference-store.js';
import { World, ptOf } from './tsdb-model-gen.js';
import type { GenPoint } from './tsdb-model-gen.js';
import { checkLast, checkLookup, checkSuggest } from './tsdb-model-checks.js';
import { compareQuery, http, telnetPuts } from './tsdb-model-wire.js';

/** Where and how the server runs: a store (reopened at restarts when it persists) and a config. */
export interface Deployment {
  readonly name: string;
  /** Config file lines (horae.* and tsd.* keys). */
  readonly config: string;
  /** True when data survive closing the store (restarts then reopen it). */
  readonly persistent: boolean;
  /** Opens the store on the run's clock (again at restarts when it persists). */
  open(clock: () => number): Promise<Store>;
  /** After the server stopped: closes a persistent store; the memory store stays open. */
  close(store: Store): Promise<void>;
  /** The file system errors are injected into, when the store runs on one. */
  readonly errors?: ErrorFileSystem;
  /** Retention, when the config sets one (its keys come from retentionConfig()). */
  readonly retention?: Retention;
  /** Many series a metric (World's manySeries), for deployments with small caches. */
  readonly manySeries?: boolean;
  /** Checks at the end of a run (e.g. that regions split). */
  verify?(store: Store): Promise<void>;
  /** Removes what the deployment made (directories). */
  destroy(): Promise<void>;
}

export interface ModelRun {
  readonly seed: number;
  readonly steps: number;
  readonly deployment: Deployment;
}

export interface ModelStats {
  /** Operations run, and ms spent, per kind. */
  readonly ops: Record<string, number>;
  readonly ms: Record<string, number>;
  /** Writes that failed (injected errors) and were retried, and restarts that took. */
  readonly retries: number;
  readonly points: number;
  readonly injected: number;
  /** Series that left the series index's in-memory copy (by its byte bound, by age), over every server of the run. */
  readonly indexEvicted: number;
  readonly indexAged: number;
}

/** 2026-06-01T09:23:17.345Z: a fake clock for the server, so hours close as the run goes. */
const T0 = Date.UTC(2026, 5, 1, 9, 23, 17, 345);
const HOUR = 3_600_000;
const DELETE_ON = 'tsd.http.query.allow_delete = true';

/** Hour compaction as soon as an hour closes, checked every 50 ms (with the fake clock: often). */
export const EAGER_HOURS = 'horae.hour_compaction.grace_ms = 0\nhorae.hour_compaction.idle_ms = 0\nhorae.hour_compaction.interval_ms = 50';
/** No background hour compaction (hours are compacted by imports and flushes only): a run replays exactly. */
export const QUIET_HOURS = 'horae.hour_compaction.interval_ms = 1000000000';
class Divergence extends Error {}

/** How long each metric's points are kept (ms; undefined: forever), as the model reads it. */
export interface Retention {
  readonly defaultMs?: number;
  /** Exact metric names, then name prefixes (`sys.cpu.` for `sys.cpu.*`): the longest wins. */
  readonly exact: Readonly<Record<string, number | undefined>>;
  readonly prefixes: Readonly<Record<string, number | undefined>>;
  /** Expired rows must be gone after a flush and a major compaction. */
  readonly dropsExpired: boolean;
}

const msText = (ms: number | undefined): string => (ms === undefined ? 'forever' : `${ms / HOUR}h`);

/** The config keys of a retention (horae.retention, horae.retention.metrics). */
export function retentionConfig(r: Retention): string {
  const rules = [...Object.entries(r.exact).map(([m, ms]) => `${m}=${msText(ms)}`), ...Object.entries(r.prefixes).map(([p, ms]) => `${p}*=${msText(ms)}`)];
  return `horae.retention = ${r.defaultMs === undefined ? '' : msText(r.defaultMs)}\nhorae.retention.metrics = ${rules.join(', ')}`;
}

function retentionOf(r: Retention | undefined, metric: string): number | undefined {
  if (r === undefined) return undefined;
  if (metric in r.exact) return r.exact[metric];
  const p = Object.keys(r.prefixes).filter((x) => metric.startsWith(x)).sort((a, b) => b.length - a.length)[0];
  return p !== undefined ? r.prefixes[p] : r.defaultMs;
}

/** Seeds per configuration: TEST_SEED pins one; TSDB_MODEL_SEEDS=n runs n (default 1) from `base`. */
export function modelSeeds(base: number): number[] {
  const pinned = process.env.TEST_SEED;
  if (pinned !== undefined && pinned !== '') return [Number(pinned)];
  const n = Number(process.env.TSDB_MODEL_SEEDS ?? '1');
  return Array.from({ length: n }, (_, i) => base + i * 104_729);
}

/** Operations per seed: TSDB_MODEL_STEPS (default 120). */
export function modelSteps(): number {
  return Number(process.env.TSDB_MODEL_STEPS ?? '120');
}

export async function runTsdbModel(o: ModelRun): Promise<ModelStats> {
  const dep = o.deployment;
  const world = new World(o.seed, dep.manySeries === true);
  const r = world.r;
  const ref = new ReferenceStore();
  const clock = { now: T0 };
  const configText = `${dep.config}\n${DELETE_ON}\n`;
  const config = parseConfigText(configText, 'model.conf').tsdb;
  const tmp = mkdtempSync(join(tmpdir(), 'horae-model-'));
  const configFile = join(tmp, 'model.conf');
  writeFileSync(configFile, configText);
  const log: string[] = [];
  const ops: Record<string, number> = {};
  const ms: Record<string, number> = {};
  let retries = 0;
  let current = '';
  let began = 0;
  let points = 0;
  let step = 0;
  let store: Store | undefined;
  let server: RunningServer | undefined;
  /** Errors injected when the store was last (re)opened: more since then excuse a failure. */
  let injectedAtOpen = 0;

  const fail = (what: string): never => {
    const file = process.env.TSDB_MODEL_LOG;
    if (file !== undefined && file !== '') writeFileSync(file, `${log.join('\n')}\n`);
    throw new Divergence(
      `${dep.name}, seed ${o.seed}, step ${step}: ${what}\n` +
      `replay: TEST_SEED=${o.seed} npx vitest run <this file> -t '${dep.name}'\n` +
      `operations up to it:\n${log.slice(-15).join('\n')}`,
    );
  };
  /** Reads return no point before this (the metric's retention back from now); -Infinity without retention. */
  const keptFrom = (metric: string): number => {
    const ms = retentionOf(dep.retention, metric);
    return ms === undefined ? -Infinity : clock.now - ms;
  };
  /** Rows of hours before this have expired by now (may be gone), the others are kept; -Infinity without retention. */
  const expiredBefore = (metric: string): number => {
    const b = keptFrom(metric);
    return b === -Infinity ? b : b - (b % HOUR);
  };
  /** The first whole hour whose points reads all return (queries start there or later). */
  const visibleFrom = (metric: string): number => {
    const b = keptFrom(metric);
    return b === -Infinity || b % HOUR === 0 ? b : b - (b % HOUR) + HOUR;
  };
  const injectedSinceOpen = (): boolean => dep.errors !== undefined && dep.errors.injected() > injectedAtOpen;
  const port = (): number => server!.port;
  const now = (): number => clock.now;

  let indexEvicted = 0;
  let indexAged = 0;
  const start = async (): Promise<void> => {
    store = await dep.open(now);
    injectedAtOpen = dep.errors?.injected() ?? 0;
    server = await startServer({ store, port: 0, bind: '127.0.0.1', config, ownsStore: false, now });
  };
  const stop = async (): Promise<void> => {
    const ix = server?.tsdb.index.stats();
    indexEvicted += ix?.evicted ?? 0;
    indexAged += ix?.aged ?? 0;
    await server?.stop();
    server = undefined;
    if (store !== undefined) await dep.close(store);
    store = undefined;
  };
  const restart = async (): Promise<void> => {
    dep.errors?.clearRules();
    await stop();
    await start();
  };

  /**
   * Runs a write until it is acknowledged. Without injected errors any failure is a bug; with
   * them it must be a server error with a message, and is retried (after a restart from the
   * third attempt on: a store that failed a WAL write or fsync stops writes until then).
   */
  const untilAcknowledged = async (what: string, attempt: () => Promise<string | undefined>): Promise<boolean> => {
    for (let i = 0; ; i++) {
      const err = await attempt();
      if (err === undefined) return i === 0;
      if (!injectedSinceOpen()) fail(`${what} failed without an injected error: ${err}`);
      if (i >= 6) fail(`${what} still fails after ${i} retries and restarts: ${err}`);
      retries++;
      if (i >= 2) await restart();
    }
  };
  /** A failed request's reply must be a server error with a message. */
  const httpError = (what: string, rep: { status: number; text: string }): string => {
    if (rep.status < 500 || !/"message"\s*:\s*"[^"]+/.test(rep.text)) fail(`${what}: an I/O error answered ${rep.status} ${rep.text.slice(0, 300)}`);
    return `${rep.status} ${rep.text.slice(0, 200)}`;
  };

  const put = async (how: string, pts: readonly GenPoint[]): Promise<void> => {
    const lines = pts.map((p) => `${p.metric} ${p.tsText} ${p.valueText} ${Object.entries(p.tags).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    let stored = pts.map((p) => p.pt);
    if (how === 'telnet') {
      await untilAcknowledged('telnet put', async () => {
        const errors = await telnetPuts(port(), lines.map((l) => `put ${l}`));
        if (errors.length === 0) return undefined;
        if (!injectedSinceOpen()) return errors.join(' | ');
        if (errors.some((e) => !/^put: .+/.test(e) && !e.startsWith('connection closed'))) fail(`telnet put: unclear error ${errors.join(' | ')}`);
        return errors.join(' | ');
      });
    } else if (how === 'json' || how === 'msgpack') {
      let body: string | Uint8Array;
      // A JSON or msgpack number is an integer when its value is a safe integer (also 14.0
      // and 1e3; README "Differences from OpenTSDB"); a JSON string follows the text rule.
      const asString = pts.map(() => how === 'json' && r.chance(0.2));
      stored = pts.map((p, i) => (!asString[i] && Number.isSafeInteger(p.pt.v) && !p.pt.int ? ptOf(p.pt.t, String(p.pt.v)) : p.pt));
      if (how === 'json') {
        const value = (p: GenPoint, i: number): string => (asString[i] ? `"${p.valueText}"` : p.valueText);
        body = `[${pts.map((p, i) => `{"metric":${JSON.stringify(p.metric)},"timestamp":${p.tsText},"value":${value(p, i)},"tags":${JSON.stringify(p.tags)}}`).join(',')}]`;
      } else {
        body = pack(pts.map((p) => ({ metric: p.metric, timestamp: Number(p.tsText), value: p.pt.int ? Number(p.valueText) : p.pt.v, tags: p.tags })));
      }
      await untilAcknowledged(`${how} put`, async () => {
        const rep = await http(port(), 'POST', '/api/put', body, how === 'json' ? 'application/json' : 'application/x-msgpack');
        return rep.status === 204 ? undefined : injectedSinceOpen() ? httpError(`${how} put`, rep) : `${rep.status} ${rep.text.slice(0, 300)}`;
      });
    } else {
      const file = join(tmp, `import-${step}.txt`);
      writeFileSync(file, `# step ${step}\n${lines.join('\n')}\n`);
      await runImport(file);
    }
    pts.forEach((p, i) => ref.put(p.metric, p.tags, stored[i]!));
    points += pts.length;
  };

  /**
   * `horae import FILE` as the command line runs it once it has opened the store
   * (tsdb/cli/import.ts): the server stopped, a Tsdb of its own on the run's clock, the
   * file imported in small batches, the closed hours it wrote compacted.
   */
  const runImport = async (file: string): Promise<void> => {
    await untilAcknowledged('import', async () => {
      await server?.stop();
      server = undefined;
      try {
        const tsdb = await Tsdb.open(store!, { config, now, background: false });
        const io = { stdout: { write: () => undefined }, stderr: { write: () => undefined } };
        try {
          const res = await importFiles(tsdb, await checkImportFiles([file]), { batchPoints: 1 + r.int(8) }, io);
          if (res.stoppedAt !== undefined) return `import stopped at ${res.stoppedAt}`;
          await compactAfterImport(tsdb, io);
        } finally {
          await tsdb.close();
        }
        return undefined;
      } catch (err) {
        return `import failed: ${(err as Error).message}`;
      } finally {
        server = await startServer({ store: store!, port: 0, bind: '127.0.0.1', config, ownsStore: false, now });
      }
    });
  };

  const query = async (q: ReturnType<World['query']>, del: boolean): Promise<void> => {
    const want = del ? ref.delete(q.ref) : ref.query(q.ref);
    const useGet = !del && q.get !== undefined && r.chance(0.4);
    const desc = useGet ? `GET ${decodeURIComponent(q.get!)}` : `${del ? 'DELETE' : 'POST'} ${q.json}`;
    log.push(`${step}: ${desc}`);
    let first = true;
    let rep = { status: 0, text: '' };
    const send = async (): Promise<string | undefined> => {
      rep = useGet ? await http(port(), 'GET', q.get!)
        : await http(port(), del && r.chance(0.5) ? 'DELETE' : 'POST', `/api/query${q.arrays ? '?arrays' : ''}`, del ? q.json.replace(/^\{/, '{"delete":true,') : q.json);
      if (rep.status === 200 || 'error' in want) return undefined;
      if (!injectedSinceOpen()) return `${rep.status} ${rep.text.slice(0, 300)}`;
      first = false;
      return httpError('query', rep);
    };
    if (del) {
      const clean = await untilAcknowledged('delete', send);
      if (!clean) return; // the retried delete answers for what the failed one left
    } else {
      const err = await send();
      if (err !== undefined && !injectedSinceOpen()) fail(`query failed: ${err}`);
      if (!first) return;
    }
    if ('error' in want) {
      if (want.orNothing === true && rep.status === 200 && rep.text.trim() === '[]') return;
      if (rep.status !== 400 && rep.status !== 404) fail(`query: ${want.error}: answered ${rep.status} ${rep.text.slice(0, 300)}, want an error`);
      return;
    }
    if (rep.status !== 200) fail(`query: answered ${rep.status} ${rep.text.slice(0, 300)}`);
    const diff = compareQuery(rep.text, want, {
      msResolution: q.msResolution, nanAsNull: q.ref.downsample?.fill === 'null', looseLongs: q.ref.aggregator === 'dev',
    });
    if (diff !== undefined) fail(`${del ? 'delete ' : ''}query answers differ: ${diff}`);
  };

  /** Every point of every series, read back with aggregator none: nothing acknowledged lost, nothing deleted back. */
  const fullCheck = async (why: string): Promise<void> => {
    for (const metric of [...ref.names.metric].sort()) {
      const q: RefQuery = { startMs: Math.max(T0 - 12 * HOUR, visibleFrom(metric)), endMs: clock.now + 2 * HOUR, metric, aggregator: 'none', filters: [] };
      const body = `{"start":${q.startMs},"end":${q.endMs},"msResolution":true,"queries":[{"metric":"${metric}","aggregator":"none"}]}`;
      log.push(`${step}: check everything (${why}): POST ${body}`);
      const rep = await http(port(), 'POST', '/api/query', body);
      if (rep.status !== 200 && injectedSinceOpen()) {
        httpError('full read', rep);
        continue;
      }
      if (rep.status !== 200) fail(`full read (${why}): ${rep.status} ${rep.text.slice(0, 300)}`);
      const want = ref.query(q);
      const diff = compareQuery(rep.text, 'error' in want ? [] : want, { msResolution: true, nanAsNull: false, looseLongs: false });
      if (diff !== undefined) fail(`full read of ${metric} (${why}) differs: ${diff}`);
    }
  };

  /** After a flush and a major compaction, no point of an expired hour row may be left. */
  const expiryCheck = async (): Promise<void> => {
    log.push(`${step}: flush, major compaction, then expired rows must be gone`);
    try {
      await server!.tsdb.data.flush();
      await server!.tsdb.data.compact({ major: true });
    } catch (err) {
      if (!injectedSinceOpen()) fail(`flush or compaction failed: ${(err as Error).message}`);
      return;
    }
    // Reads hide expired points anyway: the data table itself is read.
    const tsdb = server!.tsdb;
    const w = tsdb.widths;
    for (const metric of [...ref.names.metric].sort()) {
      const before = expiredBefore(metric);
      if (before === -Infinity || before <= T0 - 12 * HOUR) continue;
      log.push(`${step}: expired rows gone: rows of ${metric} before ${before}`);
      const uid = await tsdb.metrics.getId(metric);
      if (uid === undefined) continue;
      const left: string[] = [];
      try {
        for await (const rows of tsdb.data.scan({ families: [DATA_FAMILY] })) {
          for (const row of rows) {
            if (Buffer.compare(row.key.subarray(w.saltWidth, w.saltWidth + w.metric), uid) !== 0) continue;
            if (baseTimeOfKey(w, row.key) * 1000 < before) left.push(String(baseTimeOfKey(w, row.key)));
          }
        }
      } catch (err) {
        if (injectedSinceOpen()) continue;
        fail(`expired read: ${(err as Error).message}`);
      }
      if (left.length > 0) fail(`rows of expired hours (before ${before}) of ${metric} still there after a major compaction: base times ${left.slice(0, 3).join(',')}…`);
    }
  };

  /**
   * Deletes a whole metric (a bare name) or some of its series (`metric{tag=filter}`) for good;
   * an unknown metric is 404 and deletes nothing.
   */
  const deleteSeries = async (): Promise<void> => {
    const s = world.pick(world.series);
    const metric = r.chance(0.05) ? 'no.such.metric' : s.metric;
    const filters: RefFilter[] = [];
    if (r.chance(0.7)) {
      const k = world.pick(Object.keys(s.tags));
      const v = s.tags[k]!;
      filters.push(r.chance(0.5) ? { type: 'literal_or', tagk: k, filter: v, groupBy: false } : { type: 'wildcard', tagk: k, filter: `${v.slice(0, 1)}*`, groupBy: false });
      if (!ref.names.tagk.has(k) || !ref.names.tagv.has(v)) return; // renamed away: not the model's business
    }
    const match = `${metric}${filters.length === 0 ? '' : `{${filters.map((f) => `${f.tagk}=${f.type}(${f.filter})`).join(',')}}`}`;
    const path = `/api/admin/tsdb/delete_series?match[]=${encodeURIComponent(match)}`;
    log.push(`${step}: delete series ${match}`);
    const known = ref.names.metric.has(metric);
    await untilAcknowledged('delete_series', async () => {
      const rep = await http(port(), r.chance(0.5) ? 'POST' : 'DELETE', path);
      if (!known) return rep.status === 404 ? undefined : `${rep.status} ${rep.text.slice(0, 300)}, want 404 for an unknown metric`;
      if (rep.status === 200) return undefined;
      return injectedSinceOpen() ? httpError('delete_series', rep) : `${rep.status} ${rep.text.slice(0, 300)}`;
    });
    if (known) ref.deleteSeries(metric, filters);
  };

  const count = (k: string): void => {
    if (current !== '') ms[current] = (ms[current] ?? 0) + performance.now() - began;
    ops[k] = (ops[k] ?? 0) + 1;
    current = k;
    began = performance.now();
  };

  try {
    await start();
    for (step = 0; step < o.steps; step++) {
      clock.now += r.chance(0.1) ? r.int(2 * HOUR) : r.int(5 * 60_000);
      const x = r.int(1000);
      if (x < 400) {
        const how = x < 150 ? 'telnet' : x < 270 ? 'json' : x < 370 ? 'msgpack' : 'import';
        count(`put ${how}`);
        const pts = world.points(clock.now, 1 + r.int(r.chance(0.2) || dep.manySeries === true ? 60 : 12), (m, t) => ref.points(m, t));
        log.push(`${step}: put ${how} ${pts.map((p) => `${seriesKey(p.metric, p.tags)} ${p.tsText} ${p.valueText}`).join('; ')}`);
        await put(how, pts);
      } else if (x < 720) {
        count('query');
        await query(world.query(clock.now, visibleFrom), false);
      } else if (x < 760) {
        count('delete');
        await query(world.query(clock.now, visibleFrom), true);
      } else if (x < 810) {
        count('last');
        const s = world.pick(world.series);
        const tags: Tags = Object.fromEntries(Object.entries(s.tags).filter(() => r.chance(0.5)));
        const backScan = r.chance(0.5) ? 0 : 1 + r.int(8);
        log.push(`${step}: last ${s.metric} ${JSON.stringify(tags)} backScan ${backScan} now ${clock.now}`);
        const d = await checkLast(port(), ref, s.metric, tags, backScan, clock.now, keptFrom(s.metric));
        if (d !== undefined && !injectedSinceOpen()) fail(`/api/query/last differs: ${d}`);
      } else if (x < 840) {
        count('lookup');
        const d = r.chance(0.5) ? await checkLookup(port(), ref, world, log, step, keptFrom, clock.now) : await checkSuggest(port(), ref, world, log, step);
        if (d !== undefined && !injectedSinceOpen()) fail(d);
      } else if (x < 870) {
        const major = r.chance(0.4);
        const what = r.chance(0.4) ? 'flush' : major ? 'major compaction' : 'compaction';
        count(what);
        log.push(`${step}: ${what}`);
        try {
          if (what === 'flush') await server!.tsdb.data.flush();
          else await server!.tsdb.data.compact({ major });
        } catch (err) {
          if (!injectedSinceOpen()) fail(`${what} failed: ${(err as Error).message}`);
        }
      } else if (x < 880) {
        count('rename');
        // Retention rules name metrics: a renamed one would change its rule at the next open.
        const kind = world.pick(dep.retention !== undefined ? ['tagk', 'tagv'] as const : ['metric', 'tagk', 'tagv'] as const);
        const names = [...ref.names[kind]].sort();
        if (names.length === 0) continue;
        const from = world.pick(names);
        const to = `${from}.r${step}`;
        const path = `/api/uid/rename?${kind}=${encodeURIComponent(from)}&name=${encodeURIComponent(to)}`;
        log.push(`${step}: rename ${path}`);
        const rep = await http(port(), 'GET', path);
        if (rep.status === 200) ref.rename(kind, from, to);
        else if (!injectedSinceOpen() || rep.status < 500) fail(`rename: ${rep.status} ${rep.text.slice(0, 300)}`);
      } else if (x < 892) {
        count('delete series');
        await deleteSeries();
      } else if (x < 896 && dep.retention?.dropsExpired === true) {
        count('expiry');
        await expiryCheck();
      } else if (x < 900) {
        count('dropcaches');
        log.push(`${step}: dropcaches`);
        const rep = await http(port(), 'GET', '/api/dropcaches');
        if (rep.status !== 200) fail(`dropcaches: ${rep.status} ${rep.text}`);
      } else if (x < 920) {
        count('restart');
        log.push(`${step}: restart`);
        await restart();
        if (dep.persistent) await fullCheck('after a restart');
      } else if (dep.errors !== undefined && x < 990) {
        count('inject');
        const kinds: FsOpKind[][] = [['append'], ['append'], ['sync'], ['sync'], ['read', 'openRead'], ['read'], ['rename', 'syncDir'], ['openAppend']];
        const rule = { ops: world.pick(kinds), code: r.chance(0.2) ? 'ENOSPC' as const : 'EIO' as const, after: r.int(4), times: 1 + r.int(2) };
        log.push(`${step}: inject ${JSON.stringify(rule)}`);
        dep.errors.inject(rule);
      } else {
        count('check');
        await fullCheck('now and then');
      }
    }
    dep.errors?.clearRules();
    await fullCheck('at the end');
    if (dep.retention?.dropsExpired === true) await expiryCheck();
    if (dep.persistent) {
      await restart();
      await fullCheck('after the last restart');
    }
    await dep.verify?.(store!);
    count('');
    const ix = server?.tsdb.index.stats();
    return { ops, ms, points, retries, injected: dep.errors?.injected() ?? 0, indexEvicted: indexEvicted + (ix?.evicted ?? 0), indexAged: indexAged + (ix?.aged ?? 0) };
  } finally {
    await stop().catch(() => undefined);
    rmSync(tmp, { recursive: true, force: true });
  }
}
