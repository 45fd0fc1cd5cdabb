/**
 * The operator page in a real browser (Debian chromium via playwright-core) against a real
 * server on an embedded store: it lists the regions of every table, marks the salt bucket
 * and the region that took the writes as hot, its live ingest rate follows the writes, and
 * a failed refresh keeps the last picture and says so; its cardinality section ranks metrics
 * and tag keys by series and shows new series per minute.
 * Screenshots: test-artifacts/operator.png, operator-dark.png and operator-cardinality.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { startBrowserHarness } from '../helpers/browser.js';
import type { BrowserHarness, PutPoint } from '../helpers/browser.js';

const T0 = 1767225600;
/** Generous waits: the machine may be busy with other test processes. */
const WAIT_MS = 20_000;
let h: BrowserHarness | undefined;
let page: Page | undefined;

beforeAll(async () => {
  h = await startBrowserHarness();
}, 60_000);

afterAll(async () => {
  await h?.close();
});

/** The salt bucket holding most cells, read from the store itself (not from the page or the endpoint). */
async function busiestBucket(harness: BrowserHarness): Promise<number> {
  const cells = new Map<number, number>();
  for await (const batch of harness.server.tsdb.data.scan()) {
    for (const row of batch) cells.set(row.key[0]!, (cells.get(row.key[0]!) ?? 0) + row.cells.length);
  }
  return [...cells.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

/** An attribute of every element matching `selector`, in document order. */
const attrs = (p: Page, selector: string, name: string): Promise<(string | null)[]> => p.locator(selector).evaluateAll((els, n) => els.map((e) => e.getAttribute(n)), name);
const ingestRate = async (p: Page): Promise<number> => Number(await p.locator('[data-tile="ingest-rate"]').getAttribute('data-value'));
/** Waits until the ingest tile's value satisfies `test` (a JS expression over `v`, a number). */
const waitIngest = (p: Page, test: string): Promise<unknown> =>
  p.waitForFunction(`(() => { const a = document.querySelector('[data-tile="ingest-rate"]')?.getAttribute('data-value'); if (a === null || a === undefined || a === '') return false; const v = Number(a); return ${test}; })()`, undefined, { timeout: WAIT_MS });

describe('operator page', () => {
  it('lists the regions, marks the hot bucket and region, and updates its rates', async () => {
    const harness = h!;
    // One busy series (600 points, one row per hour) and 30 quiet ones (one point each).
    const points: PutPoint[] = [];
    for (let i = 0; i < 600; i++) points.push({ metric: 'hot.metric', timestamp: T0 + i * 60, value: i, tags: { host: 'busy' } });
    for (let s = 0; s < 30; s++) points.push({ metric: 'quiet.metric', timestamp: T0, value: s, tags: { host: `q${s}` } });
    await harness.putPoints(points);
    const bucket = await busiestBucket(harness);

    page = await harness.newPage();
    await page.goto(harness.url('/operator?refresh=300'));
    await page.waitForSelector('table.regions[data-table="tsdb"] tbody tr', { timeout: WAIT_MS });

    // Every table is listed; the data table has one region per salt bucket (pre-split).
    const tables = await attrs(page, 'table.regions', 'data-table');
    expect(tables).toEqual(['tsdb', 'tsdb-meta', 'tsdb-postings', 'tsdb-uid']);
    // The servers sharing the store: this one, live (the embedded store has no other).
    expect(await attrs(page, 'table.servers tbody tr', 'data-state')).toEqual(['live']);
    expect(await page.locator('table.servers tbody td').first().textContent()).toBe(`127.0.0.1:${harness.server.port} (this server)`);
    const salts = (await attrs(page, 'table.regions[data-table="tsdb"] tbody tr', 'data-salt')).map(Number);
    expect(salts).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const ranges = await page.locator('table.regions[data-table="tsdb"] td.range').allTextContents();
    expect(ranges[0]).toBe('(table start) → bucket 1');
    expect(ranges[19]).toBe('bucket 19 → (table end)');

    // The hotspot view marks exactly the bucket and the region that took the writes.
    const hotRows = (await attrs(page, 'table.regions[data-table="tsdb"] tr[data-hot="true"]', 'data-salt')).map(Number);
    expect(hotRows).toEqual([bucket]);
    const hotBuckets = (await attrs(page, '[data-bucket][data-hot="true"]', 'data-bucket')).map(Number);
    expect(hotBuckets).toEqual([bucket]);
    expect(await page.locator(`[data-bucket="${bucket}"] .cell-badge`).textContent()).toBe('HOT');

    // Rates follow the writes: idle -> points/s > 0 while writing -> back to 0.
    await waitIngest(page, 'v === 0');
    let writing = true;
    const writer = (async () => {
      for (let k = 0; writing; k++) {
        await harness.putPoints(Array.from({ length: 50 }, (_, i) => ({ metric: 'hot.metric', timestamp: T0 + 40_000 + k * 50 + i, value: i, tags: { host: 'busy' } })));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      await waitIngest(page, 'v > 0');
    } finally {
      writing = false;
      await writer;
    }
    expect(await ingestRate(page)).toBeGreaterThan(0);
    expect(await page.locator('#hot-basis').getAttribute('data-basis')).toBe('window');
    expect((await attrs(page, 'table.regions[data-table="tsdb"] tr[data-hot="true"]', 'data-salt')).map(Number)).toEqual([bucket]);
    await harness.screenshot(page, 'operator');
    await waitIngest(page, 'v === 0');

    // Charts drawn by uPlot; the dark theme on request; a page that ran without errors.
    expect(await page.locator('.chart .uplot').count()).toBe(2);
    const dark = await harness.newPage();
    try {
      await dark.goto(harness.url('/operator?theme=dark'));
      await dark.waitForSelector('table.regions[data-table="tsdb"] tr[data-hot="true"]', { timeout: WAIT_MS });
      expect(await dark.locator('html').getAttribute('data-theme')).toBe('dark');
      await harness.screenshot(dark, 'operator-dark');
    } finally {
      await dark.close();
    }
    expect(harness.pageErrors).toEqual([]);

    // A failed refresh keeps the last picture, says so, and the next good one recovers.
    await page.route('**/api/horae/overview', (r) => r.fulfill({ status: 503, contentType: 'text/plain', body: 'store unavailable' }));
    await page.waitForSelector('#status.error', { timeout: WAIT_MS });
    expect(await page.locator('#status').textContent()).toContain('HTTP 503: store unavailable');
    expect(await page.locator('table.regions[data-table="tsdb"] tbody tr').count()).toBe(20);
    await page.unroute('**/api/horae/overview');
    await page.waitForSelector('#status.ok', { timeout: WAIT_MS });
  }, 90_000);

  it('shows cardinality: top metrics and tag keys by series, new series per minute', async () => {
    const harness = h!;
    const errorsBefore = harness.pageErrors.length;
    // The series the first test wrote, read from the series index itself.
    const perMetric = new Map<string, number>();
    const meta = await harness.server.tsdb.store.openTable('tsdb-meta');
    for await (const batch of meta.scan()) {
      for (const row of batch) {
        const name = (await harness.server.tsdb.metrics.getName(row.key.subarray(0, harness.server.tsdb.widths.metric)))!;
        perMetric.set(name, (perMetric.get(name) ?? 0) + 1);
      }
    }
    expect(Object.fromEntries(perMetric)).toEqual({ 'hot.metric': 1, 'quiet.metric': 30 });
    const p = await harness.newPage();
    try {
      await p.goto(harness.url('/operator?refresh=300'));
      await p.waitForSelector('table.cardinality[data-kind="metrics"] tbody tr', { timeout: WAIT_MS });
      const rows = async (kind: string): Promise<Array<[string | null, string | null]>> => {
        const names = await attrs(p, `table.cardinality[data-kind="${kind}"] tbody tr`, 'data-name');
        const series = await attrs(p, `table.cardinality[data-kind="${kind}"] tbody tr`, 'data-series');
        return names.map((n, i) => [n, series[i]!]);
      };
      expect(await rows('metrics')).toEqual([['quiet.metric', '30'], ['hot.metric', '1']]);
      expect(await rows('tag-keys')).toEqual([['host', '31']]);
      expect(await p.locator('table.cardinality[data-kind="metrics"] tbody td').first().textContent()).toBe('quiet.metric');
      const minutes = (await attrs(p, '.new-series .minute', 'data-count')).map(Number);
      expect(minutes).toHaveLength(60);
      expect(minutes.reduce((a, b) => a + b, 0)).toBe(31); // every series was created in the last hour
      expect(await p.locator('.new-series .refused').textContent()).toBe('no series refused by the limits');
      expect(await p.locator('#card-basis').textContent()).toContain('31 series');
      await harness.screenshot(p, 'operator-cardinality');
    } finally {
      await p.close();
    }
    expect(harness.pageErrors.slice(errorsBefore)).toEqual([]); // (the first test's planted 503 is before)
  }, 60_000);
});
