/**
 * What the multi-server suite's clients do: send points through one server (telnet and
 * HTTP at once), note each acknowledged point in the model, read /api/stats, and wait.
 */
import { expect } from 'vitest';
import { telnetPut } from './horae-process.js';
import type { HoraeProcess } from './horae-process.js';
import type { Model, Point, Tags } from './model.js';

export interface Write {
  readonly metric: string;
  readonly tags: Tags;
  readonly p: Point;
}

export const int = (ts: number, value: number): Point => ({ ts, value, isInt: true });
export const dbl = (ts: number, value: number): Point => ({ ts, value, isInt: false });

function line(w: Write): string {
  return `put ${w.metric} ${w.p.ts} ${String(w.p.value)} ${Object.entries(w.tags).map(([k, v]) => `${k}=${v}`).join(' ')}`;
}

function json(w: Write): unknown {
  return { metric: w.metric, timestamp: w.p.ts, value: w.p.value, tags: w.tags };
}

/**
 * Sends `writes` through one server, the first half over one telnet connection and the
 * rest over HTTP /api/put in batches, both at once; each acknowledged point goes into the
 * model. Resolves with the writes that were not acknowledged (the server died).
 */
export async function send(model: Model, srv: HoraeProcess, writes: readonly Write[], onAcked?: (n: number) => void): Promise<Write[]> {
  const half = Math.ceil(writes.length / 2);
  const byTelnet = writes.slice(0, half);
  const byHttp = writes.slice(half);
  const unacked: Write[] = [];
  let telnetAcked = 0;
  const telnet = telnetPut(srv.port, byTelnet.map(line), 10, (n) => {
    for (let i = telnetAcked; i < n; i++) model.put(byTelnet[i]!.metric, byTelnet[i]!.tags, byTelnet[i]!.p);
    telnetAcked = n;
    onAcked?.(n);
  }).then((r) => {
    expect(r.errors, `${srv.name}: telnet put errors`).toBe('');
    unacked.push(...byTelnet.slice(r.acked));
  });
  const http = (async () => {
    for (let i = 0; i < byHttp.length; i += 25) {
      const batch = byHttp.slice(i, i + 25);
      let status = 0;
      try {
        status = (await srv.http('POST', '/api/put', batch.map(json))).status;
      } catch {
        // the server died: this batch and the rest are not acknowledged
      }
      if (status !== 204) {
        expect(status, `${srv.name}: /api/put`).toBe(0);
        unacked.push(...byHttp.slice(i));
        return;
      }
      for (const w of batch) model.put(w.metric, w.tags, w.p);
    }
  })();
  await Promise.all([telnet, http]);
  return unacked;
}

/** A point of a server's /api/stats (0 when it has none). */
export async function statOf(s: HoraeProcess, metric: string, tags: Readonly<Record<string, string>> = {}): Promise<number> {
  const r = await s.http('GET', '/api/stats');
  const stats = JSON.parse(r.body) as Array<{ metric: string; value: number; tags: Record<string, string> }>;
  return stats.find((p) => p.metric === metric && Object.entries(tags).every(([k, v]) => p.tags[k] === v))?.value ?? 0;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function eventuallyTrue(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(200);
  }
}
