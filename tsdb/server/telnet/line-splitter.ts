/**
 * Framing for the telnet-style line protocol, pure and socket-free: bytes in, lines out
 * (pushTo: `put` lines as byte ranges of the chunk, no object per line; other lines
 * decoded), then lines into words.
 *
 * - Lines end in `\n`; one trailing `\r` is stripped (collectd sends CRLF), as OpenTSDB's
 *   LineBasedFrameDecoder does.
 * - A line other than a put is decoded as UTF-8; one that is not valid UTF-8 as latin1
 *   (what OpenTSDB does for every line), so no byte is silently replaced by U+FFFD. Put
 *   lines are decoded the same way only if they leave the byte-level fast path.
 * - At most `maxLineBytes` bytes (excluding the terminator) are held for one line. A longer
 *   line poisons the splitter: lines before it are still returned, then `tooLong` is set and
 *   every later push returns nothing. Input is never buffered beyond one line's limit.
 * - Words are separated by runs of spaces, tabs or carriage returns; empty words do not
 *   exist (collectd's double and trailing spaces are harmless).
 */
import { isUtf8 } from 'node:buffer';
import { splitWords } from '../../write/put-line.js';

export { splitWords };

/**
 * Where LineSplitter.pushTo() delivers lines, in order. Each returns false to stop: the
 * rest of the chunk is not split (the session stops after `exit`, say).
 */
export interface LineSink {
  /**
   * A `put` line: `buf[start, end)`, terminator removed, not decoded. `buf` is the pushed
   * chunk itself (or, for a line that spanned chunks, a fresh copy) and is never modified
   * by the splitter, so the range may be kept.
   */
  put(buf: Buffer, start: number, end: number): boolean;
  /** Any other line (empty lines included), decoded. */
  line(text: string): boolean;
}

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
/** emit(): go on, the sink said stop, the line is over the limit. */
const GO = 0;
const STOP = 1;
const POISON = 2;

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

  /** pushTo() collecting the lines in an array; a put line as a view (tests, simple callers). */
  push(chunk: Uint8Array): SplitResult {
    const lines: (string | Buffer)[] = [];
    const tooLong = this.pushTo(chunk, {
      put: (b, start, end) => { lines.push(b.subarray(start, end)); return true; },
      line: (text) => { lines.push(text); return true; },
    });
    return { lines, tooLong };
  }

  /**
   * Splits `chunk` into lines for `sink`, put lines by offset (no object per line).
   * Returns true when a line over the limit was seen (now or before): the lines before it
   * were delivered, nothing after it is.
   */
  pushTo(chunk: Uint8Array, sink: LineSink): boolean {
    if (this.poisoned) return true;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let nl = buf.indexOf(LF);
    let start = 0;
    if (nl !== -1 && this.pendingLength > 0) {
      // The held bytes and the head of this chunk form the first line.
      const head = Buffer.concat([...this.pending, buf.subarray(0, nl)]);
      this.pending = [];
      this.pendingLength = 0;
      const r = this.emit(head, 0, head.length, isUtf8(head) ? 1 : 0, sink);
      if (r === POISON) return this.poison();
      if (r === STOP) return false;
      start = nl + 1;
      nl = buf.indexOf(LF, start);
    }
    if (nl !== -1) {
      // UTF-8 of the whole block, checked once when a line other than a put needs it
      // (UTF-8 sequences never contain 0x0a, so the block is valid iff every line in it is).
      let valid = -1;
      const blockStart = start;
      while (nl !== -1) {
        if (valid === -1 && !isPutLine(buf, start, nl)) valid = isUtf8(buf.subarray(blockStart, buf.lastIndexOf(LF))) ? 1 : 0;
        const r = this.emit(buf, start, nl, valid, sink);
        if (r === POISON) return this.poison();
        if (r === STOP) return false;
        start = nl + 1;
        nl = buf.indexOf(LF, start);
      }
    }
    const rest = buf.length - start;
    if (rest > 0) {
      // +1: a held trailing '\r' is part of the terminator, not of the line.
      if (this.pendingLength + rest > this.maxLineBytes + 1) return this.poison();
      this.pending.push(Buffer.from(buf.subarray(start)));
      this.pendingLength += rest;
    }
    return false;
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

  /** One line to the sink; `valid`: 1 if the bytes are UTF-8, 0 if not, -1 unknown (a put line). */
  private emit(buf: Buffer, start: number, end: number, valid: number, sink: LineSink): number {
    if (end > start && buf[end - 1] === CR) end--;
    if (end - start > this.maxLineBytes) return POISON;
    let go: boolean;
    if (isPutLine(buf, start, end)) go = sink.put(buf, start, end);
    else go = sink.line(valid === 1 ? buf.toString('utf8', start, end) : decodeLine(buf.subarray(start, end)));
    return go ? GO : STOP;
  }

  private poison(): boolean {
    this.poisoned = true;
    this.pending = [];
    this.pendingLength = 0;
    return true;
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

/** UTF-8 if the bytes are valid UTF-8, else latin1 (one char per byte, nothing replaced). */
export function decodeLine(bytes: Uint8Array): string {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buf) ? buf.toString('utf8') : buf.toString('latin1');
}
