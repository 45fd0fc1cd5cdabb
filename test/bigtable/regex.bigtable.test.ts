/**
 * Regular expressions the backend sends: key patterns translated from JavaScript syntax
 * must select on Bigtable (the emulator's RE2 over bytes) exactly the keys JavaScript
 * selects; the complement of a finite set of byte strings must match exactly the strings
 * outside it.
 */
import { describe, expect, it } from 'vitest';
import { latin1 } from '../../core/api/bytes.js';
import { Random } from '../../core/util/random.js';
import { re2OfComplement } from '../../backends/bigtable/src/regex.js';
import { freshPrefix, openTestStore, useEmulator } from './setup.js';

useEmulator();

/** An anchored `(?s)^(?:…)$` RE2 pattern made of the shared subset, as a JS RegExp. */
function asJs(re2: string): RegExp {
  return new RegExp(re2.replace(/^\(\?s\)/, ''), 's');
}

describe('bigtable regexes', () => {
  it('the complement of a set matches exactly the byte strings outside it', () => {
    const r = new Random(4242);
    for (let round = 0; round < 200; round++) {
      const set = Array.from({ length: r.int(6) }, () => r.bytes(r.int(4)));
      const inSet = new Set(set.map(latin1));
      const re = asJs(re2OfComplement(set));
      const probes = [...set, new Uint8Array(0), ...Array.from({ length: 30 }, () => r.bytes(r.int(5)))];
      for (const s of set) for (let k = 0; k <= s.length; k++) probes.push(s.subarray(0, k), Uint8Array.from([...s, r.int(256)]));
      for (const p of probes) expect(re.test(latin1(p)), `set ${[...inSet].map((x) => JSON.stringify(x))} probe ${JSON.stringify(latin1(p))}`).toBe(!inSet.has(latin1(p)));
    }
  });

  it('translated key patterns select on the emulator what JavaScript selects', async () => {
    const store = await openTestStore(freshPrefix());
    try {
      const t = await store.createTable({ name: 'rx', families: [{ name: 'f' }] });
      const keys = ['a b', 'a\tb', 'a\u000bb', 'a\u00a0b', 'a\u00e9', 'a\u00ff', 'a\u0000', 'ab', 'a\nb', 'a-b', 'Ab', 'a1'].map((s) => Buffer.from(s, 'latin1'));
      await t.mutate(keys.map((key) => ({ key, mutations: [{ type: 'put', family: 'f', qualifier: new Uint8Array(0), value: new Uint8Array(0) }] })));
      const patterns = ['a\\sb', 'a\\Sb', 'a[\\s]b', 'a\u00e9', 'a\\u00e9', 'a[\\u00e0-\\u00ff]', 'a\\0', '(?<x>a)b', 'a.b', '[^A]b', 'a\\d', 'a\\w', 'a[\\x00-\\x1f]b?', '\\x61.'];
      for (const pattern of patterns) {
        const js = new RegExp(`^(?:${pattern})$`, 's');
        const want = keys.filter((k) => js.test(latin1(k))).map(latin1).sort();
        const got: string[] = [];
        for await (const b of t.scan({ filter: { kind: 'keyRegex', pattern } })) got.push(...b.map((r) => latin1(r.key)));
        expect(got.sort(), pattern).toEqual(want);
      }
    } finally {
      await store.close();
    }
  });
});
