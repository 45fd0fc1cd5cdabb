/**
 * The figure tiles of the operator page: live rates (between the last two snapshots) and
 * the store's state. Each tile carries `data-tile` and its value `data-value` (a number,
 * or '' when unknown) so tests and scripts read it without parsing text.
 */
import { formatCount } from '../../lib/format.js';
import { formatAge, formatBytes, formatPercent, formatRate } from '../../lib/ops-format.js';
import type { OpsOverview } from '../../lib/ops-overview.js';
import { cacheHitRatio, liveRates } from '../../lib/ops-rates.js';
import { h } from '../../lib/dom.js';

interface Tile {
  readonly id: string;
  readonly label: string;
  readonly value: number | null;
  readonly text: string;
  readonly sub: string;
  readonly alarm?: boolean;
}

export function renderTiles(target: HTMLElement, before: OpsOverview | undefined, o: OpsOverview): void {
  const live = liveRates(before, o);
  const s = o.store;
  const c = o.counters;
  const hit = live.cacheHitRatio ?? cacheHitRatio(o);
  const tiles: Tile[] = [
    { id: 'ingest-rate', label: 'Ingest', value: live.pointsPerSec, text: `${formatRate(live.pointsPerSec)}`, sub: `${formatCount(c.pointsWritten)} points · ${formatCount(c.pointsRejected)} rejected` },
    { id: 'query-rate', label: 'Queries', value: live.queriesPerSec, text: formatRate(live.queriesPerSec), sub: `${formatCount(c.queries)} queries · ${formatCount(c.queryErrors)} failed` },
    { id: 'memstore', label: 'Memstore', value: s.memstoreBytes, text: formatBytes(s.memstoreBytes), sub: s.stalledWriters > 0 ? `${s.stalledWriters} writers stalled` : 'no stalled writers', alarm: s.stalledWriters > 0 },
    { id: 'wal', label: 'WAL', value: s.walBytes, text: formatBytes(s.walBytes), sub: s.recoveryDroppedBytes ? `${formatBytes(s.recoveryDroppedBytes)} dropped at open` : 'write-ahead log', alarm: (s.recoveryDroppedBytes ?? 0) > 0 },
    { id: 'files', label: 'Files', value: s.files, text: formatCount(s.files), sub: formatBytes(s.fileBytes) },
    { id: 'flushes', label: 'Flushes', value: s.flushesInProgress, text: `${s.flushesInProgress} running`, sub: `${formatCount(s.flushesDone)} done` },
    { id: 'compactions', label: 'Compactions', value: s.compactionsInProgress, text: `${s.compactionsInProgress} running`, sub: `${formatCount(s.compactionsDone)} done · ${formatCount(s.splitsDone)} splits` },
    { id: 'cache-hit', label: 'Block cache hits', value: hit, text: formatPercent(hit), sub: `${formatBytes(s.blockCache.sizeBytes)} of ${formatBytes(s.blockCache.capacityBytes)}${live.cacheHitRatio === null ? ' · since start' : ''}` },
    { id: 'uids', label: 'UIDs', value: o.uids.metric + o.uids.tagk + o.uids.tagv, text: `${formatCount(o.uids.metric)} / ${formatCount(o.uids.tagk)} / ${formatCount(o.uids.tagv)}`, sub: `metrics / tagk / tagv · ${formatCount(c.seriesCreated)} new series` },
    { id: 'uptime', label: 'Up', value: o.timeMs - o.startedMs, text: formatAge(o.timeMs - o.startedMs), sub: `${o.backend} store` },
  ];
  target.replaceChildren(
    ...tiles.map((t) =>
      h(
        'div',
        { class: t.alarm === true ? 'tile alarm' : 'tile', 'data-tile': t.id, 'data-value': t.value === null ? '' : String(t.value) },
        h('div', { class: 'tile-label' }, t.label),
        h('div', { class: 'tile-value' }, t.text),
        h('div', { class: 'tile-sub' }, t.sub),
      ),
    ),
  );
}

/** Store failures worth shouting about. */
export function renderAlerts(target: HTMLElement, o: OpsOverview): void {
  const out: string[] = [];
  if (o.store.writeFailure !== undefined) out.push(`Writes stopped: ${o.store.writeFailure} (reopen the store to recover)`);
  if ((o.store.backgroundErrors ?? 0) > 0) out.push(`${o.store.backgroundErrors} background errors; last: ${o.store.lastBackgroundError ?? 'unknown'}`);
  target.replaceChildren(...out.map((m) => h('div', { class: 'alert', role: 'alert' }, m)));
}
