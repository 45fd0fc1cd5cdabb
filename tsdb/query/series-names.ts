/**
 * The names of a scanned series (its tags as strings, its TSUID in hex), resolved once per
 * distinct TSUID and kept: a dashboard's queries read the same series again and again, and
 * resolving 8 tag pairs through the UID caches (two awaits and two hex keys per pair) cost
 * more per query than deciding which rows to read.
 *
 * Correctness: an entry holds what the tagk and tagv tables' getName answered, and is used
 * only while neither table's `namesEpoch` has moved since before it was resolved (a rename,
 * an eviction or dropCaches moves it), so it is always what getName would answer now. A
 * series with an unknown UID is not kept (it is dropped from the answer, and may have a
 * name next time).
 */
import { latin1, toHex } from '../../core/api/bytes.js';
import { tsuidTagPairs } from '../schema/row-key.js';
import type { Tsdb } from '../tsdb.js';
import { TwoGenCache } from '../uid/two-gen-cache.js';
import { tsuidHex } from './scanner.js';

export interface SeriesNames {
  /** Tag names to tag value names, in name order (frozen: shared by every query of the series). */
  readonly tags: Readonly<Record<string, string>>;
  /** The tag value UID in hex, by tag key UID in hex (for grouping). */
  readonly tagvHex: ReadonlyMap<string, string>;
  /** The TSUID in upper-case hex, as OpenTSDB prints it. */
  readonly tsuid: string;
}

/** Series kept; an entry with 8 tags holds ~1 KB. */
const CAPACITY = 32_768;

class SeriesNameCache {
  private readonly byTsuid = new TwoGenCache<string, SeriesNames>(CAPACITY);
  private tagkEpoch = -1;
  private tagvEpoch = -1;

  private readonly tsdb: Tsdb;

  constructor(tsdb: Tsdb) {
    this.tsdb = tsdb;
  }

  /** The kept names (synchronously), or a promise of them resolved now. */
  names(tsuid: Uint8Array, tags: readonly (readonly [Uint8Array, Uint8Array])[] | undefined): SeriesNames | Promise<SeriesNames | undefined> {
    const { tagks, tagvs } = this.tsdb;
    if (tagks.namesEpoch !== this.tagkEpoch || tagvs.namesEpoch !== this.tagvEpoch) {
      this.byTsuid.clear();
      this.tagkEpoch = tagks.namesEpoch;
      this.tagvEpoch = tagvs.namesEpoch;
    }
    const id = latin1(tsuid);
    return this.byTsuid.get(id) ?? this.resolve(id, tsuid, tags ?? tsuidTagPairs(this.tsdb.widths, tsuid));
  }

  private async resolve(id: string, tsuid: Uint8Array, tags: readonly (readonly [Uint8Array, Uint8Array])[]): Promise<SeriesNames | undefined> {
    const { tagks, tagvs } = this.tsdb;
    const kEpoch = this.tagkEpoch;
    const vEpoch = this.tagvEpoch;
    const named: Record<string, string> = {};
    const tagvHex = new Map<string, string>();
    for (const [k, v] of tags) {
      const kn = await tagks.getName(k);
      const vn = await tagvs.getName(v);
      if (kn === undefined || vn === undefined) return undefined;
      named[kn] = vn;
      tagvHex.set(toHex(k), toHex(v));
    }
    // In name order, as an answer lists them (execute.ts computeTags passes a lone series' tags on as they are).
    const sorted: Record<string, string> = {};
    for (const k of Object.keys(named).sort()) sorted[k] = named[k]!;
    const out: SeriesNames = { tags: Object.freeze(sorted), tagvHex, tsuid: tsuidHex(tsuid) };
    // Kept only when no name could have changed while these were read.
    if (tagks.namesEpoch === kEpoch && tagvs.namesEpoch === vEpoch && this.tagkEpoch === kEpoch && this.tagvEpoch === vEpoch) this.byTsuid.set(id, out);
    return out;
  }
}

const caches = new WeakMap<Tsdb, SeriesNameCache>();

/**
 * The names of the series with this TSUID and tag pairs (UID bytes, in key order; taken
 * from the TSUID when not given, and only when the names are not kept yet), as
 * getName answers them now; undefined when a UID has no name. Kept names come back
 * synchronously (no await per series), others as a promise.
 */
export function seriesNames(tsdb: Tsdb, tsuid: Uint8Array, tags?: readonly (readonly [Uint8Array, Uint8Array])[]): SeriesNames | Promise<SeriesNames | undefined> {
  let c = caches.get(tsdb);
  if (c === undefined) caches.set(tsdb, (c = new SeriesNameCache(tsdb)));
  return c.names(tsuid, tags);
}
