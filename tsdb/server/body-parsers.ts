/**
 * Request bodies: JSON under any content type (kept as bytes until a route asks: RawJson) (OpenTSDB's clients send application/json,
 * text/plain, nothing at all, or Telegraf's `applicaton/json`), msgpack under
 * `application/x-msgpack`, and either of them gzip- or deflate-encoded
 * (`Content-Encoding`). The size limit applies to the decoded bytes, so a small gzip
 * bomb still gets 413.
 */
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { Unpackr } from 'msgpackr';
import { TsdbError } from '../errors.js';

export const MSGPACK_TYPE = 'application/x-msgpack';
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

export function installBodyParsers(app: FastifyInstance): void {
  // A callback hook: every request with a body passes here, and the common case (no
  // encoding) should not cost a promise.
  app.addHook('preParsing', (req, _reply, payload, done) => {
    const header = req.headers['content-encoding'];
    const enc = header === undefined ? '' : String(header).toLowerCase().trim();
    if (enc === '' || enc === 'identity') {
      done(null, payload);
      return;
    }
    if (enc !== 'gzip' && enc !== 'x-gzip' && enc !== 'deflate') {
      done(new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Unsupported content encoding: ${enc}`));
      return;
    }
    // The limit and length checks then apply to the decoded bytes.
    delete req.headers['content-length'];
    const decoded = payload.pipe(enc === 'deflate' ? createInflate() : createGunzip()) as ReturnType<typeof createGunzip> & { receivedEncodedLength: number };
    decoded.receivedEncodedLength = 0;
    payload.on('data', (chunk: Buffer) => {
      decoded.receivedEncodedLength += chunk.length;
    });
    payload.on('error', (err) => decoded.destroy(err));
    decoded.on('error', () => undefined); // fastify reports it (400); this only keeps it from being unhandled
    done(null, decoded);
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(MSGPACK_TYPE, { parseAs: 'buffer' }, (_req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    try {
      done(null, unpackr.unpack(body as Buffer));
    } catch (err) {
      done(new TsdbError('TSDB_ILLEGAL_ARGUMENT', `Unable to parse the given msgpack: ${(err as Error).message}`), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => {
    done(null, (body as Buffer).length === 0 ? undefined : new RawJson(body as Buffer));
  });
}

/**
 * A JSON body not parsed yet: routes that read JSON call jsonBody(); /api/put scans the
 * bytes itself (write/put-json.ts).
 */
export class RawJson {
  readonly bytes: Buffer;
  private parsed: unknown;
  private done = false;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  /** The parsed value; throws TSDB_ILLEGAL_ARGUMENT "Unable to parse the given JSON". */
  value(): unknown {
    if (!this.done) {
      try {
        this.parsed = JSON.parse(this.bytes.toString('utf8'));
      } catch {
        throw new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'Unable to parse the given JSON');
      }
      this.done = true;
    }
    return this.parsed;
  }
}

/** A request body as a value: JSON parsed on demand, msgpack already decoded. */
export function jsonBody(body: unknown): unknown {
  return body instanceof RawJson ? body.value() : body;
}
