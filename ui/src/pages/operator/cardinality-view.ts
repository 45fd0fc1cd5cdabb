/**
 * The cardinality section of the operator page (GET /api/horae/cardinality): two tables,
 * the metrics with the most series and the tag keys carried by the most series, each row
 * with a bar for its share of all series; and new series per minute over the last hour,
 * a strip of 60 bars scaled to the busiest minute, with the hour and day totals and what
 * the limits refused. Rows carry data-name and data-series, bars data-minute and
 * data-count, for tests and scripts.
 */
import { formatCount, formatTimestamp } from '../../lib/format.js';
import type { OpsCardinality, OpsCardinalityEntry } from '../../lib/ops-cardinality.js';
import { h } from '../../lib/dom.js';

function ranking(kind: 'metrics' | 'tag-keys', title: string, entries: readonly OpsCardinalityEntry[], total: number, of: number): HTMLElement {
  const rows = entries.map((e) => {
    const share = total > 0 ? e.series / total : 0;
    const fill = h('span', { class: 'fill' });
    fill.style.width = `${Math.round(share * 100)}%`;
    return h(
      'tr',
      { 'data-name': e.name, 'data-series': String(e.series) },
      h('td', { class: 'name' }, e.name),
      h('td', { class: 'num' }, formatCount(e.series)),
      h('td', { class: 'share' }, h('span', { class: 'bar' }, fill), `${(share * 100).toFixed(1)}%`),
    );
  });
  const head = h('tr', {}, h('th', {}, title), h('th', {}, 'series'), h('th', {}, 'of all series'));
  return h('div', { class: 'table-block' },
    h('h3', {}, `Top ${title}s `, h('small', {}, `${entries.length} of ${formatCount(of)}`)),
    h('table', { class: 'cardinality', 'data-kind': kind }, h('thead', {}, head), h('tbody', {}, ...rows)));
}

function perMinute(c: OpsCardinality): HTMLElement {
  const counts = c.newSeries.perMinute;
  const most = Math.max(1, ...counts);
  const bars = counts.map((n, i) => {
    const bar = h('span', { class: 'minute', 'data-minute': String(i - counts.length + 1), 'data-count': String(n), title: `${formatCount(n)} new series, ${counts.length - 1 - i} min ago` });
    bar.style.height = `${n === 0 ? 0 : Math.max(4, Math.round((n / most) * 100))}%`;
    return bar;
  });
  const refused = Object.entries(c.refused).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${formatCount(n)}`);
  return h('div', { class: 'table-block new-series' },
    h('h3', {}, 'New series per minute ', h('small', {}, `last hour ${formatCount(c.newSeries.lastHour)} · last day ${formatCount(c.newSeries.lastDay)} · peak ${formatCount(Math.max(0, ...counts))}/min`)),
    h('div', { class: 'minutes', role: 'img', 'aria-label': 'new series in each of the last 60 minutes' }, ...bars),
    h('div', { class: 'refused', 'data-refused': String(refused.length) }, refused.length === 0 ? 'no series refused by the limits' : `refused by the limits: ${refused.join(' · ')}`));
}

export function renderCardinality(target: HTMLElement, basis: HTMLElement, c: OpsCardinality): void {
  basis.textContent = `${formatCount(c.series)} series · counted ${formatTimestamp(c.countedMs)}`;
  target.replaceChildren(
    h('div', { class: 'cardinality-grid' },
      ranking('metrics', 'metric', c.metrics, c.series, c.metricCount),
      ranking('tag-keys', 'tag key', c.tagKeys, c.series, c.tagKeyCount)),
    perMinute(c),
  );
}
