/**
 * The regions of the operator page: per table a heat strip of the write share of each
 * region (and, for the data table, of each salt bucket), hot parts outlined and labelled,
 * then a table of every region with its key range, size, files, memstore and counters.
 *
 * Shares compare the writes of the snapshot window (the last minute of refreshes); when
 * nothing was written in it (or on the first refresh) they fall back to the cumulative
 * counts, and the heading says which. Rows and cells carry data-* attributes
 * (data-region-id, data-salt, data-bucket, data-hot) for tests and scripts.
 */
import { formatCount } from '../../lib/format.js';
import { formatAge, formatBytes, formatPercent, formatRate } from '../../lib/ops-format.js';
import type { Share } from '../../lib/ops-hotspot.js';
import { bucketWrites, heat, writeShares } from '../../lib/ops-hotspot.js';
import { formatKey, formatKeyRange } from '../../lib/ops-key-range.js';
import type { OpsOverview } from '../../lib/ops-overview.js';
import type { RegionActivity } from '../../lib/ops-rates.js';
import { regionActivity } from '../../lib/ops-rates.js';
import { h } from '../../lib/dom.js';

export interface RegionsViewInput {
  readonly latest: OpsOverview;
  /** The snapshot before the latest (for per-second rates). */
  readonly previous: OpsOverview | undefined;
  /** The oldest snapshot of the window (for shares). */
  readonly oldest: OpsOverview | undefined;
}

export interface RegionsViewTargets {
  readonly hotspots: HTMLElement;
  readonly basis: HTMLElement;
  readonly tables: HTMLElement;
}

/** Past this many cells a strip drops the cells' text (hover shows it). */
const DENSE_CELLS = 48;

/** Background of a part by its heat: white through amber to red. */
function heatColour(h: number): string {
  if (h === 0) return 'var(--idle)';
  return `hsl(${Math.round(45 - 45 * h)}, 90%, ${Math.round(88 - 40 * h)}%)`;
}

function total(acts: readonly RegionActivity[] | undefined): number {
  return (acts ?? []).reduce((s, a) => s + a.writes, 0);
}

/** Data table first, then the others by name. */
function tableOrder(o: OpsOverview): string[] {
  const names = o.tables.map((t) => t.name).filter((n) => n !== o.schema.dataTable);
  return o.tables.some((t) => t.name === o.schema.dataTable) ? [o.schema.dataTable, ...names] : names;
}

function strip(title: string, cells: readonly { label: string; attrs: Record<string, string>; share: Share; detail: string }[]): HTMLElement {
  return h(
    'div',
    { class: 'strip-row' },
    h('div', { class: 'strip-title' }, title),
    h(
      'div',
      { class: cells.length > DENSE_CELLS ? 'strip dense' : 'strip', role: 'list' },
      ...cells.map((c) =>
        h(
          'div',
          {
            ...c.attrs,
            role: 'listitem',
            class: c.share.hot ? 'cell hot' : 'cell',
            'data-hot': String(c.share.hot),
            'data-share': c.share.share.toFixed(4),
            style: `background:${heatColour(heat(c.share))}`,
            title: `${c.detail}\n${formatCount(c.share.writes)} cells written (${formatPercent(c.share.share)}, ${c.share.skew.toFixed(1)}× fair share)`,
          },
          h('span', { class: 'cell-label' }, c.label),
          h('span', { class: 'cell-share' }, c.share.writes === 0 ? '' : formatPercent(c.share.share)),
          c.share.hot ? h('span', { class: 'cell-badge' }, 'HOT') : null,
        ),
      ),
    ),
  );
}

export function renderRegions(t: RegionsViewTargets, input: RegionsViewInput): void {
  const { latest } = input;
  const windowed = input.oldest === undefined ? undefined : regionActivity(input.oldest, latest);
  const windowTotal = [...(windowed?.values() ?? [])].reduce((s, a) => s + total(a), 0);
  const useWindow = windowed !== undefined && windowTotal > 0;
  const basis = useWindow ? windowed : regionActivity(undefined, latest);
  t.basis.textContent = useWindow
    ? `— cells written in the last ${formatAge(latest.timeMs - input.oldest!.timeMs)}`
    : '— cells written since each region opened';
  t.basis.dataset['basis'] = useWindow ? 'window' : 'cumulative';
  const perSec = regionActivity(input.previous, latest);

  const strips: HTMLElement[] = [];
  const tables: HTMLElement[] = [];
  for (const name of tableOrder(latest)) {
    const acts = basis.get(name) ?? [];
    const isData = name === latest.schema.dataTable;
    const shares = writeShares(acts.map((a) => a.writes));
    if (isData && latest.schema.saltWidth > 0) {
      const buckets = bucketWrites(acts.map((a) => ({ salt: a.region.startHint?.salt, writes: a.writes })), latest.schema.saltBuckets);
      const bShares = writeShares(buckets);
      strips.push(strip(`${name} by salt bucket`, bShares.map((s, i) => ({ label: String(i), attrs: { 'data-bucket': String(i) }, share: s, detail: `salt bucket ${i}` }))));
    }
    strips.push(
      strip(
        `${name} by region`,
        acts.map((a, i) => ({ label: String(i), attrs: { 'data-region-id': a.region.id, 'data-table': name }, share: shares[i]!, detail: formatKeyRange(a.region) })),
      ),
    );
    tables.push(regionTable(name, acts, shares, perSec.get(name) ?? [], isData && latest.schema.saltWidth > 0));
  }
  t.hotspots.replaceChildren(...strips);
  t.tables.replaceChildren(...tables);
}

function regionTable(name: string, acts: readonly RegionActivity[], shares: readonly Share[], perSec: readonly RegionActivity[], salted: boolean): HTMLElement {
  const rate = new Map(perSec.map((p) => [p.region.id, p]));
  const head = ['#', 'Key range', 'Size', 'Files', 'Memstore', 'Cells written', 'Writes/s', 'Write share', 'Rows read', 'Reads/s'];
  const sum = (f: (a: RegionActivity) => number): number => acts.reduce((s, a) => s + f(a), 0);
  return h(
    'div',
    { class: 'table-block' },
    h('h3', {}, name, h('small', {}, ` ${acts.length} regions · ${formatBytes(sum((a) => a.region.sizeBytes))} · ${formatCount(sum((a) => a.region.files))} files`)),
    h(
      'table',
      { class: 'regions', 'data-table': name },
      h('thead', {}, h('tr', {}, ...head.map((title) => h('th', { scope: 'col' }, title)))),
      h(
        'tbody',
        {},
        ...acts.map((a, i) => {
          const r = a.region;
          const s = shares[i]!;
          const p = rate.get(r.id);
          return h(
            'tr',
            { 'data-region-id': r.id, 'data-salt': salted ? String(r.startHint?.salt ?? 0) : undefined, 'data-hot': String(s.hot), class: s.hot ? 'hot' : undefined },
            h('td', { class: 'num' }, String(i)),
            h(
              'td',
              { class: 'range', title: `${r.start || '(start)'} → ${r.end || '(end)'}` },
              formatKey(r.start, 'start', r.startHint),
              h('span', { class: 'arrow' }, ' → '),
              formatKey(r.end, 'end', r.endHint),
              r.flushing ? h('span', { class: 'job', 'data-job': 'flush' }, 'flushing') : null,
              r.compacting ? h('span', { class: 'job', 'data-job': 'compaction' }, 'compacting') : null,
            ),
            h('td', { class: 'num' }, formatBytes(r.sizeBytes)),
            h('td', { class: 'num' }, String(r.files)),
            h('td', { class: 'num' }, formatBytes(r.memstoreBytes)),
            h('td', { class: 'num' }, formatCount(r.cellsWritten)),
            h('td', { class: 'num', 'data-rate': 'writes' }, formatRate(p?.writesPerSec)),
            h('td', { class: 'share' }, h('div', { class: 'bar' }, h('div', { class: 'fill', style: `width:${(s.share * 100).toFixed(1)}%;background:${heatColour(heat(s))}` })), h('span', {}, s.writes === 0 ? '—' : formatPercent(s.share)), s.hot ? h('span', { class: 'cell-badge' }, 'HOT') : null),
            h('td', { class: 'num' }, formatCount(r.rowsRead)),
            h('td', { class: 'num', 'data-rate': 'reads' }, formatRate(p?.readsPerSec)),
          );
        }),
      ),
    ),
  );
}
