/**
 * The /api/stats points about the servers sharing the store (meta/servers.ts) and this
 * server's change feed (meta/change-log.ts):
 *
 *   horae.cluster.servers{state=live|silent|stopped}       servers by their last heartbeat
 *   horae.cluster.server.beat_age_ms{server,address,state}  per server: age of its last beat
 *   horae.cluster.server.points_written{server,address}     per server: its ingest counter
 *   horae.cluster.change_log.appended / applied / unknown   this server's entries written,
 *                                                           others' applied, gaps given up on
 */
import type { StatPoint, Tsdb } from '../../tsdb.js';
import type { ServerView } from '../../meta/servers.js';

export function clusterStats(tsdb: Tsdb, servers: readonly ServerView[]): StatPoint[] {
  const ts = Math.floor(tsdb.now() / 1000);
  const out: StatPoint[] = [];
  const add = (metric: string, value: number, tags: Record<string, string> = {}): void => {
    out.push({ metric, timestamp: ts, value, tags: { host: 'horae', ...tags } });
  };
  for (const state of ['live', 'silent', 'stopped'] as const) add('horae.cluster.servers', servers.filter((s) => s.state === state).length, { state });
  for (const s of servers) {
    add('horae.cluster.server.beat_age_ms', s.ageMs, { server: s.id, address: s.address, state: s.state });
    add('horae.cluster.server.points_written', s.counters['pointsWritten'] ?? 0, { server: s.id, address: s.address });
  }
  const f = tsdb.catalog.feedStats();
  if (f !== undefined) {
    add('horae.cluster.change_log.appended', f.appended);
    add('horae.cluster.change_log.applied', f.applied);
    add('horae.cluster.change_log.unknown', f.unknown);
  }
  return out;
}
