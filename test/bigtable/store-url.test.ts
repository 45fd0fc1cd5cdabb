/**
 * Store URLs: bigtable://PROJECT/INSTANCE[?prefix=&appProfile=] parsed into options; bad
 * URLs and unknown schemes refused; and without the backend package installed, opening
 * one says how to install it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBigtableUrl } from '../../backends/bigtable/src/url.js';
import { BIGTABLE_INSTALL_HINT, openRemoteStore, StoreUrlError } from '../../tsdb/cli/open-store.js';

describe('store URLs', () => {
  it('parses project, instance, table prefix and app profile', () => {
    expect(parseBigtableUrl('bigtable://my-project/my-instance')).toEqual({ projectId: 'my-project', instanceId: 'my-instance', tablePrefix: '', appProfileId: undefined });
    expect(parseBigtableUrl('bigtable://p/i/?prefix=tsdb_&appProfile=batch')).toEqual({ projectId: 'p', instanceId: 'i', tablePrefix: 'tsdb_', appProfileId: 'batch' });
  });

  it('refuses malformed URLs and unknown parameters', () => {
    for (const bad of ['bigtable://p', 'bigtable:///i', 'bigtable://p/i/x', 'bigtable://p/i?prefx=a', 'nonsense']) {
      expect(() => parseBigtableUrl(bad), bad).toThrow(/bigtable:\/\/PROJECT\/INSTANCE|unknown parameter/);
    }
  });

  it('refuses unknown schemes, and says how to install the backend when it is missing', async () => {
    await expect(openRemoteStore('hbase://x/y')).rejects.toBeInstanceOf(StoreUrlError);
    const empty = mkdtempSync(join(tmpdir(), 'horae-no-backend-'));
    try {
      const err = await openRemoteStore('bigtable://p/i', empty).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUrlError);
      expect((err as Error).message).toBe(BIGTABLE_INSTALL_HINT);
      expect(BIGTABLE_INSTALL_HINT).toMatch(/npm run install:bigtable/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
