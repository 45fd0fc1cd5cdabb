/**
 * docs/CONFIG.md is what the config table generates (`npm run docs:config`), and the
 * table's derived pieces agree with it: `horae help config` lists every key and name,
 * GET /api/config's map every time-series key, every default passes the validator.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { configHelp, configMarkdown } from '../../../tsdb/cli/config-doc.js';
import { CONFIG_KEYS, DEFAULT_TSDB_CONFIG, TSDB_FIELDS, configStrings, resolveTsdbConfig } from '../../../tsdb/config.js';
import type { TsdbConfig } from '../../../tsdb/config.js';

describe('the config table', () => {
  it('generates docs/CONFIG.md (regenerate with `npm run docs:config`)', () => {
    const onDisk = readFileSync(new URL('../../../docs/CONFIG.md', import.meta.url), 'utf8');
    expect(onDisk, 'docs/CONFIG.md is stale: run `npm run docs:config`').toBe(configMarkdown());
  });

  it('lists every key and every other name in `horae help config` and the docs', () => {
    const help = configHelp();
    const md = configMarkdown();
    for (const def of Object.values(CONFIG_KEYS)) {
      for (const name of [def.key, ...('aliases' in def ? def.aliases : [])]) {
        expect(help, name).toContain(name);
        expect(md, name).toContain(`\`${name}\``);
      }
    }
  });

  it('gives TsdbConfig the value types of its entries', () => {
    expectTypeOf<TsdbConfig['durability']>().toEqualTypeOf<'sync' | 'buffered'>();
    expectTypeOf<TsdbConfig['compactHours']>().toEqualTypeOf<boolean>();
    expectTypeOf<TsdbConfig['maxTags']>().toEqualTypeOf<number>();
    expectTypeOf<TsdbConfig['corsDomains']>().toEqualTypeOf<string>();
    expectTypeOf<TsdbConfig>().not.toHaveProperty('port');
    expectTypeOf<TsdbConfig>().not.toHaveProperty('memstoreFlushBytes');
  });

  it('has defaults that pass its own checks', () => {
    expect(resolveTsdbConfig()).toEqual(DEFAULT_TSDB_CONFIG);
    expect(Object.keys(DEFAULT_TSDB_CONFIG).sort()).toEqual([...TSDB_FIELDS].sort());
  });

  it('rejects bad typed values and unknown fields, naming the field and its key', () => {
    expect(() => resolveTsdbConfig({ maxTags: 0 })).toThrow('config maxTags (horae.max_tags) must be an integer in 1..64, got 0');
    expect(() => resolveTsdbConfig({ durability: 'never' as TsdbConfig['durability'] })).toThrow('must be sync or buffered');
    expect(() => resolveTsdbConfig({ compactHours: 'yes' as unknown as boolean })).toThrow('config compactHours (horae.hour_compaction.enable) must be true or false');
    expect(() => resolveTsdbConfig({ noSuchKnob: 1 } as Partial<TsdbConfig>)).toThrow('config: unknown field noSuchKnob');
    expect(resolveTsdbConfig({ maxTags: undefined }).maxTags).toBe(DEFAULT_TSDB_CONFIG.maxTags);
  });

  it('answers /api/config with every time-series key under its horae.* and OpenTSDB names, tokens hidden', () => {
    const m = configStrings(resolveTsdbConfig({ authTokens: 'secret-token-0123456789 write', maxTags: 5 }));
    for (const f of TSDB_FIELDS) expect(m, f).toHaveProperty([CONFIG_KEYS[f].key]);
    expect(m['horae.max_tags']).toBe('5');
    expect(m['tsd.storage.max_tags']).toBe('5');
    expect(m['tsd.storage.enable_compaction']).toBe('true');
    expect(m['horae.compaction.enable']).toBeUndefined();
    expect(m['tsd.mode']).toBe('rw');
    expect(JSON.stringify(m)).not.toContain('secret-token');
    expect(m['horae.auth.tokens']).toBe('(set; hidden)');
    expect(Object.keys(m)).toEqual(Object.keys(m).sort());
  });
});
