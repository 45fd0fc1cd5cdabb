/**
 * Store URLs of this backend: `bigtable://PROJECT/INSTANCE[?prefix=P&appProfile=A]`.
 * The emulator is reached through BIGTABLE_EMULATOR_HOST; credentials as the client
 * library reads them.
 */
import type { BigtableStoreOptions } from './bigtable-store.js';

export function parseBigtableUrl(url: string): BigtableStoreOptions {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`bad store URL ${JSON.stringify(url)}: expected bigtable://PROJECT/INSTANCE[?prefix=P&appProfile=A]`);
  }
  const instance = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, ''));
  const project = decodeURIComponent(u.hostname);
  if (u.protocol !== 'bigtable:' || project === '' || instance === '' || instance.includes('/')) {
    throw new Error(`bad store URL ${JSON.stringify(url)}: expected bigtable://PROJECT/INSTANCE[?prefix=P&appProfile=A]`);
  }
  const known = new Set(['prefix', 'appProfile']);
  for (const k of u.searchParams.keys()) {
    if (!known.has(k)) throw new Error(`bad store URL ${JSON.stringify(url)}: unknown parameter ${k} (known: prefix, appProfile)`);
  }
  return {
    projectId: project,
    instanceId: instance,
    tablePrefix: u.searchParams.get('prefix') ?? '',
    appProfileId: u.searchParams.get('appProfile') ?? undefined,
  };
}
