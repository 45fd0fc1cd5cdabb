/**
 * A store whose every family names a row transform that rewrites each row's cells into
 * themselves (the identity): flushes and compactions then take the transform path of the
 * engine (core/lsm/row-transformer.ts) for every row, and the contract and model suites
 * check it reads exactly as the plain path. Table specs read back without the name.
 */
import type { RowTransform, RowTransformFactory, TransformCell } from '../../core/api/row-transform.js';
import { registerRowTransform } from '../../core/api/row-transform.js';
import type { Store, Table, TableSpec } from '../../core/api/store.js';

export const IDENTITY_TRANSFORM = 'test.identity';

/** The identity transform: fresh cells (copies), the same content. */
export const identityTransform: RowTransformFactory = (): RowTransform => ({
  transformRow(_row, cells): TransformCell[] {
    return cells.map((c) => ({ qualifier: c.qualifier.slice(), timestamp: c.timestamp, value: c.value.slice() }));
  },
});

/** Registers the identity transform in this thread (job workers import this module). */
export function registerIdentityTransform(): void {
  registerRowTransform(IDENTITY_TRANSFORM, { module: import.meta.url, exportName: 'identityTransform', factory: identityTransform });
}

function stripped(spec: TableSpec): TableSpec {
  return { ...spec, families: spec.families.map(({ transform: _t, ...f }) => f) };
}

function wrapTable(t: Table): Table {
  const spec = stripped(t.spec);
  return new Proxy(t, {
    get(target, p, recv) {
      if (p === 'spec') return spec;
      const v = Reflect.get(target, p, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** `store` with the identity transform named by every family it creates. */
export function withIdentityTransform(store: Store): Store {
  registerIdentityTransform();
  return new Proxy(store, {
    get(target, p, recv) {
      if (p === 'createTable') {
        return async (spec: TableSpec, opts?: { ifNotExists?: boolean }) =>
          wrapTable(await target.createTable({ ...spec, families: spec.families.map((f) => ({ ...f, transform: IDENTITY_TRANSFORM })) }, opts));
      }
      if (p === 'openTable') return async (name: string) => wrapTable(await target.openTable(name));
      const v = Reflect.get(target, p, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
