/**
 * The protobuf bytes of the data calls that carry rows, read and written here instead of
 * through the client library's generic path. That path turns each response into a
 * decoded message and then into a plain object (every int64 through a Long and a decimal
 * string, every bytes field copied into a Buffer of its own) and each request back from a
 * plain object into a message before encoding it: a third of a small query's CPU on
 * Bigtable (bench:bigtable). Here:
 *
 * - requests are encoded straight from the objects built in table-read.ts and
 *   table-write.ts by the library's generated encoders (protos.js), which read plain
 *   objects as they are;
 * - ReadRowsResponse and MutateRowsResponse are decoded by hand into the shapes the
 *   generic path gave (IReadRowsResponse, IMutateRowsResponse), with every bytes field a
 *   view of the received message (no copy) and every int64 a number (a decimal string
 *   beyond 2^53).
 *
 * Fields decoded (google/bigtable/v2/bigtable.proto, data.proto, google/rpc/status.proto);
 * every other field is skipped by its wire type, as protobuf requires:
 *
 *   ReadRowsResponse   1 chunks (CellChunk, repeated)
 *   CellChunk          1 row_key bytes, 2 family_name StringValue{1 value}, 3 qualifier
 *                      BytesValue{1 value}, 4 timestamp_micros int64, 6 value bytes,
 *                      7 value_size int32, 8 reset_row bool, 9 commit_row bool
 *   MutateRowsResponse 1 entries (Entry, repeated)
 *   Entry              1 index int64, 2 status Status{1 code int32, 2 message string}
 */
import { createRequire } from 'node:module';
import type { protos as ProtoTypes } from '@google-cloud/bigtable';

type IReadRowsRequest = ProtoTypes.google.bigtable.v2.IReadRowsRequest;
type IReadRowsResponse = ProtoTypes.google.bigtable.v2.IReadRowsResponse;
type IMutateRowsRequest = ProtoTypes.google.bigtable.v2.IMutateRowsRequest;
type IMutateRowsResponse = ProtoTypes.google.bigtable.v2.IMutateRowsResponse;
type Chunk = NonNullable<IReadRowsResponse['chunks']>[number];
type MutateEntry = NonNullable<IMutateRowsResponse['entries']>[number];

/** The library's generated message classes (not reachable through its ESM named exports). */
const protos = createRequire(import.meta.url)('@google-cloud/bigtable/build/protos/protos.js') as typeof ProtoTypes;
const v2 = protos.google.bigtable.v2;

export function encodeReadRowsRequest(req: IReadRowsRequest): Buffer {
  return asBuffer(v2.ReadRowsRequest.encode(req).finish());
}

export function encodeMutateRowsRequest(req: IMutateRowsRequest): Buffer {
  return asBuffer(v2.MutateRowsRequest.encode(req).finish());
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length);
}

/** A cursor over protobuf bytes. Throws on bytes that end inside a field. */
class Reader {
  pos: number;

  constructor(readonly buf: Uint8Array, start: number, readonly end: number) {
    this.pos = start;
  }

  /** A varint of up to 32 bits (tags, lengths, int32, bool); higher bits are dropped. */
  uint32(): number {
    const b = this.buf;
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw truncated();
      const byte = b[this.pos++]!;
      if (shift < 32) result |= (byte & 0x7f) << shift;
      if (byte < 0x80) return result >>> 0;
      shift += 7;
      if (shift > 63) throw new Error('protobuf: varint longer than 10 bytes');
    }
  }

  /** An int64 varint: a number when below 2^53, else its decimal string. */
  int64(): number | string {
    const b = this.buf;
    let lo = 0;
    let hi = 0;
    for (let shift = 0; ; shift += 7) {
      if (this.pos >= this.end) throw truncated();
      if (shift > 63) throw new Error('protobuf: varint longer than 10 bytes');
      const byte = b[this.pos++]!;
      const bits = byte & 0x7f;
      if (shift < 28) lo |= bits << shift;
      else if (shift === 28) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >>> 4;
      } else hi |= bits << (shift - 32);
      if (byte < 0x80) break;
    }
    lo >>>= 0;
    hi >>>= 0;
    if (hi < 0x200000) return hi * 0x1_0000_0000 + lo;
    return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
  }

  /** The [start, end) of a length-delimited field's bytes; moves past them. */
  span(): number {
    const n = this.uint32();
    const start = this.pos;
    if (n > this.end - start) throw truncated();
    this.pos = start + n;
    return start;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.int64();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.span();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new Error(`protobuf: unexpected wire type ${wireType}`);
    }
    if (this.pos > this.end) throw truncated();
  }
}

function truncated(): Error {
  return new Error('protobuf: message truncated');
}

/** The bytes [start, pos) of `r` as a Buffer view. */
function viewOf(r: Reader, start: number): Buffer {
  const b = r.buf;
  return Buffer.from(b.buffer, b.byteOffset + start, r.pos - start);
}

/** The value (field 1) of a StringValue / BytesValue wrapper in [start, end). */
function wrapped(buf: Uint8Array, start: number, end: number): Reader | undefined {
  const r = new Reader(buf, start, end);
  let found: Reader | undefined;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) {
      const s = r.span();
      found = new Reader(buf, s, r.pos);
    } else r.skip(tag & 7);
  }
  return found;
}

function cellChunk(buf: Uint8Array, start: number, end: number): Chunk {
  const r = new Reader(buf, start, end);
  const c: { -readonly [K in keyof Chunk]: Chunk[K] } = {};
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag) {
      case 0x0a: { // 1 row_key
        const s = r.span();
        c.rowKey = viewOf(r, s);
        break;
      }
      case 0x12: { // 2 family_name
        const s = r.span();
        const v = wrapped(buf, s, r.pos);
        c.familyName = { value: v === undefined ? '' : Buffer.from(buf.buffer, buf.byteOffset + v.pos, v.end - v.pos).toString('utf8') };
        break;
      }
      case 0x1a: { // 3 qualifier
        const s = r.span();
        const v = wrapped(buf, s, r.pos);
        c.qualifier = { value: v === undefined ? Buffer.alloc(0) : Buffer.from(buf.buffer, buf.byteOffset + v.pos, v.end - v.pos) };
        break;
      }
      case 0x20: // 4 timestamp_micros
        c.timestampMicros = r.int64();
        break;
      case 0x32: { // 6 value
        const s = r.span();
        c.value = viewOf(r, s);
        break;
      }
      case 0x38: // 7 value_size
        c.valueSize = r.uint32() | 0;
        break;
      case 0x40: // 8 reset_row
        c.resetRow = r.uint32() !== 0;
        break;
      case 0x48: // 9 commit_row
        c.commitRow = r.uint32() !== 0;
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return c;
}

/** A ReadRowsResponse message: its chunks, bytes as views of `buf`. */
export function decodeReadRowsResponse(buf: Uint8Array): IReadRowsResponse {
  const r = new Reader(buf, 0, buf.length);
  const chunks: Chunk[] = [];
  while (r.pos < r.end) {
    const tag = r.uint32();
    if (tag === 0x0a) {
      const s = r.span();
      chunks.push(cellChunk(buf, s, r.pos));
    } else r.skip(tag & 7);
  }
  return { chunks };
}

function status(buf: Uint8Array, start: number, end: number): { code: number; message: string } {
  const r = new Reader(buf, start, end);
  let code = 0;
  let message = '';
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x08) code = r.uint32() | 0;
    else if (tag === 0x12) {
      const s = r.span();
      message = viewOf(r, s).toString('utf8');
    } else r.skip(tag & 7);
  }
  return { code, message };
}

/** A MutateRowsResponse message: each entry's index and status. */
export function decodeMutateRowsResponse(buf: Uint8Array): IMutateRowsResponse {
  const r = new Reader(buf, 0, buf.length);
  const entries: MutateEntry[] = [];
  while (r.pos < r.end) {
    const tag = r.uint32();
    if (tag !== 0x0a) {
      r.skip(tag & 7);
      continue;
    }
    const s = r.span();
    const e = new Reader(buf, s, r.pos);
    let index: number | string = 0;
    let st: { code: number; message: string } | undefined;
    while (e.pos < e.end) {
      const t = e.uint32();
      if (t === 0x08) index = e.int64();
      else if (t === 0x12) {
        const ss = e.span();
        st = status(buf, ss, e.pos);
      } else e.skip(t & 7);
    }
    entries.push(st === undefined ? { index } : { index, status: st });
  }
  return { entries };
}
