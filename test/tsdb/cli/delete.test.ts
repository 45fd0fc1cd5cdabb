/**
 * `horae delete MATCH...` on a store in a temporary directory: a series match and a whole
 * metric go (the metric's name too); an unknown metric or a malformed match deletes nothing.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { horae, readAll, tempDir, withTsdb } from './cli-helpers.js';

const T0 = 1704067200;

describe('horae delete', () => {
  let t: { dir: string; cleanup: () => void };
  let data: string;
  beforeEach(async () => {
    t = tempDir();
    data = join(t.dir, 'data');
    await withTsdb(data, async (tsdb) => {
      const pts = [];
      for (const metric of ['m1', 'm2']) for (const host of ['a', 'b']) for (let h = 0; h < 2; h++) pts.push({ metric, timestamp: T0 + h * 3600, value: h, isInt: true, tags: [['host', host]] as Array<[string, string]> });
      await tsdb.ingest.write(pts);
    });
  });
  afterEach(() => t.cleanup());

  const seriesLeft = async (): Promise<string[]> => [...new Set((await readAll(data)).points.map((p) => p.series))];

  it('deletes a series and a whole metric, with its name', async () => {
    const r = await horae(['delete', '--data-dir', data, 'm1{host=a}', 'm2']);
    expect(r).toEqual({ code: 0, out: 'deleted m1{host=a}: 1 series, 2 rows\ndeleted metric m2: 2 series, its name and UID\n', err: '' });
    expect(await seriesLeft()).toEqual(['m1{host=b}']);
    expect((await horae(['uid', '--data-dir', data, 'metrics', 'm2'])).err).toMatch(/No such name/);
  });

  it('deletes nothing when a metric is unknown or a match is malformed', async () => {
    const unknown = await horae(['delete', '--data-dir', data, 'm1', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("No such name for 'metrics': 'nope'");
    const bad = await horae(['delete', '--data-dir', data, 'm1{host']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("Missing '}'");
    const none = await horae(['delete', '--data-dir', data]);
    expect(none.code).toBe(2);
    expect(await seriesLeft()).toEqual(['m1{host=a}', 'm1{host=b}', 'm2{host=a}', 'm2{host=b}']);
  });
});
