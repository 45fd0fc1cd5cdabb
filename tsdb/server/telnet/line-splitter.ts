/**
 * Framing for the telnet-style line protocol, pure and socket-free: bytes in, decoded
 * lines out, then lines into words.
 *
 * - Lines end in `\n`; one trailing `\r` is stripped (collectd sends CRLF), as OpenTSDB's
 *   LineBasedFrameDecoder does.
 * - A line is decoded as UTF-8; a line that is not valid UTF-8 is decoded as latin1 (what
 *   OpenTSDB does for every line), so no byte is silently replaced by U+FFFD.
 * - At most `maxLineBytes` bytes (excluding the terminator) are held for one line. A longer
 *   line poisons the splitter: lines before it are still returned, then `tooLong` is set and
 *   every later push returns nothing. Input is never buffered beyond one line's limit.
 * - Words are separated by runs of spaces, tabs or carriage returns; empty words do not
 *   exist (collectd's double and trailing spaces are harmless).
 */
import { isUtf8 } from 'node:buffer';
import { splitWords } from '../../write/line-parser.js';

export { splitWords };

export interface SplitResult {
  /**
   * Complete lines, in order, without their terminators (empty lines included). A `put`
   * line comes as its raw bytes (a view of the chunk, not decoded: the put path parses
   * bytes); every other line as a string.
   */
  readonly lines: (string | Buffer)[];
  /** A line over the limit was seen; nothing after it is returned. */
  readonly tooLong: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  readonly maxLineBytes: number;
  /** Bytes of the unterminated line seen so far (copied: a chunk is never pinned). */
  private pending: Buffer[] = [];
  private pendingLength = 0;
  private poisoned = false;

  constructor(maxLineBytes: number) {
    if (!Number.isInteger(maxLineBytes) || maxLineBytes < 1) throw new RangeError(`maxLineBytes must be a positive integer, got ${maxLineBytes}`);
    this.maxLineBytes = maxLineBytes;
  }

  /** Bytes held for an unterminated line. */
  get pendingBytes(): number {
    return this.pendingLength;
  }

  /** True once a line over the limit was seen. */
  get isPoisoned(): boolean {
    return this.poisoned;
  }

  push(chunk: Uint8Array): SplitResult {
    const lines: (string | Buffer)[] = [];
    if (this.poisoned) return { lines, tooLong: true };
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let nl = buf.indexOf(LF);
    let start = 0;
    if (nl !== -1 && this.pendingLength > 0) {
      // The held bytes and the head of this chunk form the first line.
      const head = Buffer.concat([...this.pending, buf.subarray(0, nl)]);
      this.pending = [];
      this.pendingLength = 0;
      if (!this.emit(head, 0, head.length, isUtf8(head), lines)) return this.poison(lines);
      start = nl + 1;
      nl = buf.indexOf(LF, start);
    }
    if (nl !== -1) {
      const last = buf.lastIndexOf(LF);
      // UTF-8 sequences never contain 0x0a, so the block is valid iff every line in it is.
      const valid = isUtf8(buf.subarray(start, last));
      while (nl !== -1) {
        if (!this.emit(buf, start, nl, valid, lines)) return this.poison(lines);
        start = nl + 1;
        nl = buf.indexOf(LF, start);
      }
    }
    const rest = buf.length - start;
    if (rest > 0) {
      // +1: a held trailing '\r' is part of the terminator, not of the line.
      if (this.pendingLength + rest > this.maxLineBytes + 1) return this.poison(lines);
      this.pending.push(Buffer.from(buf.subarray(start)));
      this.pendingLength += rest;
    }
    return { lines, tooLong: false };
  }

  /**
   * End of input: drops an unterminated last line (it may have been cut short by a client
   * crash, so storing it could store a wrong value) and returns its length in bytes.
   */
  end(): number {
    const dropped = this.pendingLength;
    this.pending = [];
    this.pendingLength = 0;
    return dropped;
  }

  private emit(buf: Buffer, start: number, end: number, valid: boolean, out: (string | Buffer)[]): boolean {
    if (end > start && buf[end - 1] === CR) end--;
    if (end - start > this.maxLineBytes) return false;
    if (isPutLine(buf, start, end)) out.push(buf.subarray(start, end));
    else out.push(valid ? buf.toString('utf8', start, end) : decodeLine(buf.subarray(start, end)));
    return true;
  }

  private poison(lines: (string | Buffer)[]): SplitResult {
    this.poisoned = true;
    this.pending = [];
    this.pendingLength = 0;
    return { lines, tooLong: true };
  }
}

/** True for `put` followed by a space or tab (or nothing): a line for the put path. */
export function isPutLine(b: Uint8Array, start: number, end: number): boolean {
  if (end - start < 3 || b[start] !== 0x70 || b[start + 1] !== 0x75 || b[start + 2] !== 0x74) return false;
  if (end - start === 3) return true;
  const c = b[start + 3];
  return c === 0x20 || c === 0x09;
}

/** The words after `put` of a raw put line. */
export function putWords(line: Uint8Array): string[] {
  return splitWords(decodeLine(line)).slice(1);
}

/** Words of a raw line, at most `max` counted (cheap arity checks without decoding). */
export function countWords(b: Uint8Array, max: number): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < b.length && n < max; i++) {
    const c = b[i];
    const space = c === 0x20 || c === 0x09 || c === CR;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/** UTF-8 if the bytes are valid UTF-8, else latin1 (one char per byte, nothing replaced). */
export function decodeLine(bytes: Uint8Array): string {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buf) ? buf.toString('utf8') : buf.toString('latin1');
}
