/**
 * The servers of the operator page: every server sharing the store (from the heartbeat
 * rows, tsdb/meta/servers.ts), one table row each: address, state (live, silent: no beat
 * for 15 s — died or cut off from the store —, stopped cleanly), last beat, uptime,
 * version, points written, series created and change-log entries applied. Rows carry
 * data-server-id and data-state for tests and scripts.
 */
import { formatCount } from '../../lib/format.js';
import { formatAge } from '../../lib/ops-format.js';
import type { OpsOverview } from '../../lib/ops-overview.js';
import { h } from '../../lib/dom.js';

export function renderServers(target: HTMLElement, o: OpsOverview): void {
  const servers = o.servers ?? [];
  const head = h('tr', {}, ...['server', 'state', 'last beat', 'up', 'version', 'points written', 'series created', 'changes applied'].map((t) => h('th', {}, t)));
  const rows = servers.map((s) => h(
    'tr',
    { 'data-server-id': s.id, 'data-state': s.state, class: s.state === 'silent' ? 'hot' : undefined },
    h('td', {}, `${s.address}${s.self ? ' (this server)' : ''}`),
    h('td', {}, s.state),
    h('td', { class: 'num' }, `${formatAge(s.ageMs)} ago`),
    h('td', { class: 'num' }, formatAge(s.beatMs - s.startedMs)),
    h('td', {}, s.version),
    h('td', { class: 'num' }, formatCount(s.counters['pointsWritten'] ?? 0)),
    h('td', { class: 'num' }, formatCount(s.counters['seriesCreated'] ?? 0)),
    h('td', { class: 'num' }, formatCount(s.counters['changesApplied'] ?? 0)),
  ));
  target.replaceChildren(h('div', { class: 'table-block' }, h('table', { class: 'servers' }, h('thead', {}, head), h('tbody', {}, ...rows))));
}
