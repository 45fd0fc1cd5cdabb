/**
 * The fallback emulator, forced: built offline from Debian's golang-go and
 * golang-google-cloud-dev by scripts/build-bigtable-emulator.sh (cached under .cache/),
 * started, and driven through the backend's every kind of call. Runs on every machine, so
 * a CI machine without cbtemulator cannot be surprised by the fallback.
 */
import { describe, expect, it } from 'vitest';
import { decodeInt64, utf8 } from '../../core/api/bytes.js';
import type { Row } from '../../core/api/store.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

const emulator = useEmulator('debian');

describe('fallback emulator (bttest built from Debian packages)', () => {
  it('serves binary keys and qualifiers, filters, increments, check-and-put and regions', async () => {
    expect(emulator().kind).toBe('debian');
    const store = await openTestStore(freshPrefix());
    try {
      const t = await store.createTable({ name: 'smoke', families: [{ name: 't' }], splitPoints: [Uint8Array.of(1), Uint8Array.of(2)] });
      const rows = [0, 1, 2, 3].map((salt) => ({
        key: Uint8Array.of(salt, 0xff, 0x00, 0x0a),
        mutations: [{ type: 'put' as const, family: 't', qualifier: Uint8Array.of(0xbb, 0x87), value: Uint8Array.of(salt) }],
      }));
      await t.mutate(rows);
      const seen: Row[] = [];
      for await (const b of t.scan({ filter: { kind: 'keyRegex', pattern: '[\\x01\\x02]\\xff\\x00\\n' } })) seen.push(...b);
      expect(seen.map((r) => [...r.key])).toEqual([[1, 0xff, 0, 0x0a], [2, 0xff, 0, 0x0a]]);
      expect([...seen[0]!.cells[0]!.qualifier]).toEqual([0xbb, 0x87]);
      const cell = { family: 't', qualifier: utf8('n') };
      const got = await Promise.all(Array.from({ length: 50 }, () => t.increment(utf8('ctr'), cell, 1n)));
      expect(new Set(got).size).toBe(50);
      const [ctr] = await t.get([utf8('ctr')]);
      expect(decodeInt64(ctr!.cells[0]!.value)).toBe(50n);
      const wins = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        t.checkAndPut(utf8('lock'), cell, undefined, [{ type: 'put', family: 't', qualifier: utf8('n'), value: utf8(`w${i}`) }])));
      expect(wins.filter((w) => w)).toHaveLength(1);
      const regions = await t.regions();
      expect(regions.slice(1).map((r) => [...r.start])).toEqual([[1], [2]]);
    } finally {
      await store.close();
    }
  });
});
