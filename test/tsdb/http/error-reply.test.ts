/**
 * errorReplyOf (tsdb/server/http-errors.ts) maps whatever a route or fastify throws
 * to the reply's status and message: Horae's and fastify's errors keep their status, and
 * anything else, even a thrown non-object, is a 500 naming it without server paths.
 */
import { describe, expect, it } from 'vitest';
import { TsdbError } from '../../../tsdb/errors.js';
import { errorReplyOf } from '../../../tsdb/server/http-errors.js';

describe('errorReplyOf', () => {
  it('maps Horae errors, fastify errors and anything else', () => {
    expect(errorReplyOf(new TsdbError('TSDB_ILLEGAL_ARGUMENT', 'bad'))).toEqual({ status: 400, message: 'bad' });
    expect(errorReplyOf(Object.assign(new Error('Request body is too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 })))
      .toEqual({ status: 413, message: 'Request body too large', details: 'Request body is too large' });
    expect(errorReplyOf(new Error('open /srv/horae/data/000023.sst failed'))).toEqual({ status: 500, message: 'Internal error: open 000023.sst failed' });
    expect(errorReplyOf(null)).toEqual({ status: 500, message: 'Internal error: null' });
    expect(errorReplyOf('boom')).toEqual({ status: 500, message: 'Internal error: boom' });
  });
});
