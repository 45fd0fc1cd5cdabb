/**
 * An annotated, human-readable dump of an SST (Pebble binfmt style) for golden tests, the
 * dump CLI and debugging: footer fields, properties, filter, index entries, and every data
 * block with its trailer, restart array and entries (prefix-compression fields included).
 *
 * It reads from a byte array and never throws on a damaged file: each problem is printed
 * inline as a line starting with "!!" and the dump continues where it can. Output is
 * deterministic (no timestamps or paths) so it can be snapshotted. Pure function.
 */
import { toHex } from '../api/bytes.js';
import { crc32c, maskCrc } from '../util/crc32c.js';
import { ByteReader } from '../util/coding.js';
import { Block } from './block.js';
import { BloomFilter } from './bloom.js';
import { decompressBlock } from './compression.js';
import {
  BLOCK_TRAILER_BYTES, COMPRESSION_NAMES, FOOTER_BYTES, SST_MAGIC_HEX, decodeFooter, decodeProperties, hex32,
} from './sst-format.js';
import type { BlockHandle } from './sst-format.js';

/** dumpSst options. */
export interface DumpOptions {
  /** Renders a key. Default: hex. */
  readonly formatKey?: (key: Uint8Array) => string;
  /** Renders a value. Default: hex. */
  readonly formatValue?: (value: Uint8Array) => string;
  /** Stop listing data entries after this many (blocks are still summarized). Default: all. */
  readonly maxEntries?: number;
  /** Name used in error messages. Default "<bytes>". */
  readonly path?: string;
}

interface Decoded {
  raw?: Uint8Array;
  lines: string[];
}

/** Renders the SST in `bytes` as an indented tree, one fact per line, ending in "\n". */
export function dumpSst(bytes: Uint8Array, opts: DumpOptions = {}): string {
  const fk = opts.formatKey ?? toHex;
  const fv = opts.formatValue ?? toHex;
  const path = opts.path ?? '<bytes>';
  let budget = opts.maxEntries ?? Infinity;
  const out: string[] = [`sst ${bytes.length} bytes`];
  if (bytes.length < FOOTER_BYTES) {
    out.push(`!! file too short for the ${FOOTER_BYTES}-byte footer`);
    return out.join('\n') + '\n';
  }
  const footerOffset = bytes.length - FOOTER_BYTES;
  const fb = bytes.subarray(footerOffset);
  const dv = new DataView(fb.buffer, fb.byteOffset, fb.byteLength);
  const handleAt = (o: number): BlockHandle => ({
    offset: dv.getUint32(o) * 0x100000000 + dv.getUint32(o + 4),
    size: dv.getUint32(o + 8),
  });
  const raw = { filter: handleAt(0), properties: handleAt(12), index: handleAt(24) };
  out.push(`footer @${footerOffset} (${FOOTER_BYTES} bytes)`);
  out.push(`  filter      @${raw.filter.offset} size ${raw.filter.size}${raw.filter.size === 0 ? ' (none)' : ''}`);
  out.push(`  properties  @${raw.properties.offset} size ${raw.properties.size}`);
  out.push(`  index       @${raw.index.offset} size ${raw.index.size}`);
  out.push(`  version     ${dv.getUint32(36)}`);
  out.push(`  checksum    0x${hex32(dv.getUint32(40))}`);
  out.push(`  magic       0x${hex32(dv.getUint32(44))}${hex32(dv.getUint32(48))}${dv.getUint32(44) === 0x484f5241 && dv.getUint32(48) === 0x45535354 ? ' "HORAESST"' : ` (want 0x${SST_MAGIC_HEX})`}`);
  try {
    decodeFooter(fb, path, footerOffset);
  } catch (err) {
    out.push(`!! ${(err as Error).message}`);
    return out.join('\n') + '\n';
  }

  const block = (what: string, h: BlockHandle): Decoded => {
    const lines: string[] = [];
    const where = `${what} @${h.offset}`;
    const end = h.offset + h.size + BLOCK_TRAILER_BYTES;
    if (end > footerOffset) return { lines: [`${where} size ${h.size}`, `  !! runs past the footer`] };
    const type = bytes[h.offset + h.size]!;
    const t = h.offset + h.size + 1;
    const stored = ((bytes[t]! << 24) | (bytes[t + 1]! << 16) | (bytes[t + 2]! << 8) | bytes[t + 3]!) >>> 0;
    const computed = maskCrc(crc32c(bytes, h.offset, h.offset + h.size + 1));
    const typeName = COMPRESSION_NAMES[type] ?? `unknown(${type})`;
    const ok = stored === computed ? 'ok' : `MISMATCH, computed 0x${hex32(computed)}`;
    lines.push(`${where} size ${h.size} compression ${typeName} checksum 0x${hex32(stored)} (${ok})`);
    try {
      const data = decompressBlock(type, bytes.subarray(h.offset, h.offset + h.size), `${path}: ${where}`);
      if (type !== 0) lines.push(`  raw size ${data.length}`);
      return { raw: data, lines };
    } catch (err) {
      lines.push(`  !! ${(err as Error).message}`);
      return { lines };
    }
  };

  // Properties.
  const pb = block('properties', raw.properties);
  out.push(...pb.lines);
  if (pb.raw !== undefined) {
    try {
      const p = decodeProperties(pb.raw, `${path}: properties @${raw.properties.offset}`);
      out.push(`  smallestKey      ${p.entries === 0 ? '(none)' : fk(p.smallestKey)}`);
      out.push(`  largestKey       ${p.entries === 0 ? '(none)' : fk(p.largestKey)}`);
      out.push(`  entries          ${p.entries}`);
      out.push(`  dataBlocks       ${p.dataBlocks}`);
      out.push(`  rawKeyBytes      ${p.rawKeyBytes}`);
      out.push(`  rawValueBytes    ${p.rawValueBytes}`);
      out.push(`  compression      ${p.compression}`);
      out.push(`  bloomBitsPerKey  ${p.bloomBitsPerKey}`);
      for (const k of Object.keys(p.props).sort()) out.push(`  ${`props.${k}`.padEnd(16)} ${JSON.stringify(p.props[k])}`);
    } catch (err) {
      out.push(`  !! ${(err as Error).message}`);
    }
  }

  // Filter.
  if (raw.filter.size > 0) {
    const f = block('filter', raw.filter);
    out.push(...f.lines);
    if (f.raw !== undefined) {
      const bloom = new BloomFilter(f.raw);
      let set = 0;
      for (let i = 0; i < f.raw.length - 1; i++) for (let b = f.raw[i]!; b !== 0; b &= b - 1) set++;
      out.push(`  ${bloom.sizeBits} bits, ${bloom.probes} probes, ${set} bits set`);
    }
  }

  // Index.
  const handles: BlockHandle[] = [];
  const ib = block('index', raw.index);
  out.push(...ib.lines);
  if (ib.raw !== undefined) {
    const entries = walk(ib.raw, `${path}: index @${raw.index.offset}`);
    out.push(...entries.header.map((l) => `  ${l}`));
    entries.items.forEach((e, i) => {
      const r = new ByteReader(e.value);
      const h = { offset: r.uvarint(), size: r.uvarint() };
      const bad = r.err !== undefined || r.remaining !== 0;
      out.push(`  #${i} last key ${fk(e.key)} -> ${bad ? `!! malformed handle ${toHex(e.value)}` : `block @${h.offset} size ${h.size}`}`);
      if (!bad) handles.push(h);
    });
    if (entries.error !== undefined) out.push(`  !! ${entries.error}`);
  }

  // Data blocks.
  handles.forEach((h, i) => {
    const d = block(`block #${i}`, h);
    out.push(...d.lines);
    if (d.raw === undefined) return;
    const entries = walk(d.raw, `${path}: block @${h.offset}`);
    out.push(...entries.header.map((l) => `  ${l}`));
    for (const e of entries.items) {
      if (budget <= 0) {
        out.push(`  ... entries elided (maxEntries)`);
        break;
      }
      budget--;
      out.push(`  +${e.at} shared ${e.shared} unshared ${e.unshared} value ${e.value.length}: ${fk(e.key)} = ${fv(e.value)}`);
    }
    if (entries.error !== undefined) out.push(`  !! ${entries.error}`);
  });
  return out.join('\n') + '\n';
}

interface Entry {
  at: number;
  shared: number;
  unshared: number;
  key: Uint8Array;
  value: Uint8Array;
}

/** Decodes every entry of a block with its prefix-compression fields. */
function walk(raw: Uint8Array, label: string): { header: string[]; items: Entry[]; error?: string } {
  let b: Block;
  try {
    b = Block.parse(raw, label);
  } catch (err) {
    return { header: [], items: [], error: (err as Error).message };
  }
  const header = [`restarts ${b.numRestarts} [${Array.from(b.restarts, (r) => `+${r}`).join(' ')}] entries end @+${b.restartsOffset}`];
  const items: Entry[] = [];
  const r = new ByteReader(raw, 0, b.restartsOffset);
  let prev = new Uint8Array(0);
  while (r.remaining > 0 && r.err === undefined) {
    const at = r.pos;
    const shared = r.uvarint();
    const unshared = r.uvarint();
    const vlen = r.uvarint();
    const delta = r.bytes(unshared);
    const value = r.bytes(vlen);
    if (r.err !== undefined) break;
    if (shared > prev.length) return { header, items, error: `entry @+${at}: shares ${shared} bytes of a ${prev.length}-byte key` };
    const key = new Uint8Array(shared + unshared);
    key.set(prev.subarray(0, shared));
    key.set(delta, shared);
    items.push({ at, shared, unshared, key, value });
    prev = key;
  }
  return r.err === undefined ? { header, items } : { header, items, error: `${label}: ${r.err}` };
}
