/**
 * The names of a scanned series (its tags as strings, its TSUID in hex), resolved once per
 * distinct TSUID and kept: a dashboard's queries read the same series again and again, and
 * resolving 8 tag pairs through the UID caches (two awaits and two hex keys per pair) cost
 * more per query than deciding which rows to read.
 *
 * Correctness (the catalog's rule, catalog.ts): the name of a UID changes only by a rename,
 * and a rename (like dropCaches) touches everything the catalog derived; an entry is kept
 * only when nothing was touched while it was resolved, and all are dropped once something
 * was. A series with an unknown UID is not kept (it is dropped from the answer, and may
 * have a name next time).
 */
import { latin1, toHex } from '../../core/api/bytes.js';
import { tsuidTagPairs, tsuidToHex } from '../schema/row-key.js';
import type { SchemaWidths } from '../schema/widths.js';
import type { UidTable } from '../uid/uid-table.js';
import { NAMES_ENTRY_BYTES } from '../memory/catalog-memory.js';
import { TwoGenCache } from '../uid/two-gen-cache.js';

export interface SeriesNames {
  /** Tag names to tag value names, in name order (frozen: shared by every query of the series). */
  readonly tags: Readonly<Record<string, string>>;
  /** The tag value UID in hex, by tag key UID in hex (for grouping). */
  readonly tagvHex: ReadonlyMap<string, string>;
  /** The TSUID in upper-case hex, as OpenTSDB prints it. */
  readonly tsuid: string;
  /** Heap bytes of this entry by the estimate (NAMES_ENTRY_BYTES and the names' and hex lengths). */
  readonly bytes: number;
}

/** What the cache needs of its owner: the catalog's change stamps. */
export interface NameStamps {
  stamp(): number;
  holds(at: number): boolean;
}

export class SeriesNameCache {
  private readonly byTsuid: TwoGenCache<string, SeriesNames>;
  /** The stamp the kept entries were resolved under. */
  private at = -1;
  private readonly widths: SchemaWidths;
  private readonly tagks: UidTable;
  private readonly tagvs: UidTable;
  private readonly stamps: NameStamps;

  /** `maxBytes`: the bound of the kept names (an entry with 8 tags is ~1 KB). */
  constructor(widths: SchemaWidths, tagks: UidTable, tagvs: UidTable, stamps: NameStamps, maxBytes: number) {
    this.byTsuid = new TwoGenCache(maxBytes, (id, n) => id.length + n.bytes);
    this.widths = widths;
    this.tagks = tagks;
    this.tagvs = tagvs;
    this.stamps = stamps;
  }

  /**
   * The names of the series with this TSUID and tag pairs (UID bytes, in key order; taken
   * from the TSUID when not given, and only when the names are not kept yet), as getName
   * answers them now; undefined when a UID has no name. Kept names come back
   * synchronously (no await per series), others as a promise.
   */
  names(tsuid: Uint8Array, tags?: readonly (readonly [Uint8Array, Uint8Array])[]): SeriesNames | Promise<SeriesNames | undefined> {
    if (!this.stamps.holds(this.at)) this.clear();
    const id = latin1(tsuid);
    return this.byTsuid.get(id) ?? this.resolve(id, tsuid, tags ?? tsuidTagPairs(this.widths, tsuid));
  }

  /** Bytes and entries kept. */
  get bytes(): number {
    return this.byTsuid.bytes;
  }

  get size(): number {
    return this.byTsuid.size;
  }

  clear(): void {
    this.byTsuid.clear();
    this.at = this.stamps.stamp();
  }

  private async resolve(id: string, tsuid: Uint8Array, tags: readonly (readonly [Uint8Array, Uint8Array])[]): Promise<SeriesNames | undefined> {
    const at = this.stamps.stamp();
    const named: Record<string, string> = {};
    const tagvHex = new Map<string, string>();
    let bytes = NAMES_ENTRY_BYTES + 2 * tsuid.length;
    for (const [k, v] of tags) {
      const kn = await this.tagks.getName(k);
      const vn = await this.tagvs.getName(v);
      if (kn === undefined || vn === undefined) return undefined;
      named[kn] = vn;
      tagvHex.set(toHex(k), toHex(v));
      bytes += kn.length + vn.length + 2 * (k.length + v.length);
    }
    // In name order, as an answer lists them (execute.ts computeTags passes a lone series' tags on as they are).
    const sorted: Record<string, string> = {};
    for (const k of Object.keys(named).sort()) sorted[k] = named[k]!;
    const out: SeriesNames = { tags: Object.freeze(sorted), tagvHex, tsuid: tsuidToHex(tsuid), bytes };
    // Kept only when no name could have changed while these were read.
    if (this.stamps.holds(at) && this.stamps.holds(this.at)) this.byTsuid.set(id, out);
    return out;
  }
}
