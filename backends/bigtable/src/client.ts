/**
 * The connection to Bigtable: the raw GAPIC data and table-admin clients of
 * `@google-cloud/bigtable` 6.x (the high-level API turns binary qualifiers into UTF-8),
 * with the library's own retries switched off
 * on every call (errors surface at once; retry.ts decides) and a deadline on each.
 * ReadRows and MutateRows, the calls that carry rows, go straight to the data client's
 * gRPC stub with the bytes read and written in wire.ts (the library's stream wrappers and
 * message conversions cost more CPU than the rest of a small query); the same channel,
 * credentials and routing header, errors with the same gRPC codes.
 *
 * The emulator is reached through BIGTABLE_EMULATOR_HOST (or `endpoint`), over an
 * insecure channel; otherwise credentials come the way the client library reads them
 * (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default credentials, the metadata
 * server).
 */
import { Bigtable, v2 } from '@google-cloud/bigtable';
import type { protos as ProtoTypes } from '@google-cloud/bigtable';
import { decodeMutateRowsResponse, decodeReadRowsResponse, encodeMutateRowsRequest, encodeReadRowsRequest } from './wire.js';

export type IReadRowsRequest = ProtoTypes.google.bigtable.v2.IReadRowsRequest;
export type IReadRowsResponse = ProtoTypes.google.bigtable.v2.IReadRowsResponse;
export type IMutateRowsRequest = ProtoTypes.google.bigtable.v2.IMutateRowsRequest;
export type IMutateRowsResponse = ProtoTypes.google.bigtable.v2.IMutateRowsResponse;
export type IMutation = ProtoTypes.google.bigtable.v2.IMutation;
export type IRowFilter = ProtoTypes.google.bigtable.v2.IRowFilter;
export type ICheckAndMutateRowRequest = ProtoTypes.google.bigtable.v2.ICheckAndMutateRowRequest;
export type IReadModifyWriteRowRequest = ProtoTypes.google.bigtable.v2.IReadModifyWriteRowRequest;
export type IRow = ProtoTypes.google.bigtable.v2.IRow;
export type ITable = ProtoTypes.google.bigtable.admin.v2.ITable;
export type IGcRule = ProtoTypes.google.bigtable.admin.v2.IGcRule;

export interface ConnectionOptions {
  readonly projectId: string;
  readonly instanceId: string;
  /** App profile for data calls (routing, isolation); default the instance's default. */
  readonly appProfileId?: string | undefined;
  /** host:port of an emulator; default BIGTABLE_EMULATOR_HOST, else the real service. */
  readonly endpoint?: string | undefined;
  /** Deadline of each call in ms (default 60 s). */
  readonly callTimeoutMs?: number | undefined;
}

/** Stream-call options: gax's legacy retry-request path disabled (it retried anything). */
function noStreamRetry(timeout: number): Record<string, unknown> {
  return { timeout, retryRequestOptions: { currentRetryAttempt: 0, noResponseRetries: 0, shouldRetryFn: () => false } };
}

/** Unary-call options: no retry. */
function noRetry(timeout: number): Record<string, unknown> {
  return { timeout, retry: null };
}

/** HTTP/2 receive window of the data channel, per stream and per connection (bytes). */
const FLOW_CONTROL_WINDOW = 4 * 1024 * 1024;

const READ_ROWS = '/google.bigtable.v2.Bigtable/ReadRows';
const MUTATE_ROWS = '/google.bigtable.v2.Bigtable/MutateRows';

/** What is used of a gRPC Metadata (@grpc/grpc-js). */
interface GrpcMetadata {
  set(key: string, value: string): void;
}

/** What is used of the data client's stub (a @grpc/grpc-js Client). */
interface GrpcStub {
  makeServerStreamRequest<Req, Resp>(
    method: string, serialize: (v: Req) => Buffer, deserialize: (b: Buffer) => Resp, argument: Req,
    metadata: GrpcMetadata, options: { deadline: number },
  ): CancellableStream;
}

/** A stream the caller can cancel (gax's CancellableStream). */
interface CancellableStream extends NodeJS.ReadableStream {
  cancel(): void;
}

export class Connection {
  readonly instanceName: string;
  readonly appProfileId: string | undefined;
  readonly emulator: boolean;
  private readonly data: InstanceType<typeof v2.BigtableClient>;
  private readonly admin: InstanceType<typeof v2.BigtableTableAdminClient>;
  private readonly timeoutMs: number;

  constructor(o: ConnectionOptions) {
    const endpoint = o.endpoint ?? nonEmpty(process.env.BIGTABLE_EMULATOR_HOST);
    // The Bigtable object only computes the per-client options (endpoint, TLS or not,
    // channel pool); every call goes through the raw clients made from them.
    const bt = new Bigtable({
      projectId: o.projectId,
      metricsEnabled: false,
      ...(endpoint === undefined ? {} : { apiEndpoint: endpoint }),
    });
    // A receive window that holds a whole ReadRows page: with HTTP/2's default 64 KiB the
    // server stops every 64 KiB for a window update (bench: 160 KB of rows 2.4 -> 1.8 ms).
    this.data = new v2.BigtableClient({ ...bt.options.BigtableClient, 'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW });
    this.admin = new v2.BigtableTableAdminClient(bt.options.BigtableTableAdminClient);
    this.instanceName = `projects/${o.projectId}/instances/${o.instanceId}`;
    this.appProfileId = o.appProfileId;
    this.emulator = endpoint !== undefined;
    this.timeoutMs = o.callTimeoutMs ?? 60_000;
  }

  tablePath(tableId: string): string {
    return `${this.instanceName}/tables/${tableId}`;
  }

  private withProfile<T extends object>(req: T): T {
    return this.appProfileId === undefined ? req : { ...req, appProfileId: this.appProfileId };
  }

  /**
   * One ReadRows call, collected: every response message in order. `onResponse` sees each
   * message as it arrives (the row merger runs there); `signal` cancels the stream.
   */
  /** Data-API calls made, by method (StoreStats.rpcs; every attempt of a retried call counts). */
  readonly calls = { readRows: 0, mutateRows: 0, checkAndMutateRow: 0, readModifyWriteRow: 0, sampleRowKeys: 0 };

  async readRows(req: IReadRowsRequest, onResponse: (r: IReadRowsResponse) => void, signal?: AbortSignal): Promise<void> {
    this.calls.readRows++;
    const r = this.withProfile(req);
    const stub = this.stub ?? (await this.openStub());
    const stream = stub.makeServerStreamRequest(READ_ROWS, encodeReadRowsRequest, decodeReadRowsResponse, r, this.routing(r.tableName, r.appProfileId), this.deadline());
    return drain(stream, onResponse as (v: unknown) => void, signal);
  }

  /** One MutateRows call; `onResponse` gets each batch of per-entry statuses. */
  async mutateRows(req: IMutateRowsRequest, onResponse: (r: IMutateRowsResponse) => void): Promise<void> {
    this.calls.mutateRows++;
    const r = this.withProfile(req);
    const stub = this.stub ?? (await this.openStub());
    const stream = stub.makeServerStreamRequest(MUTATE_ROWS, encodeMutateRowsRequest, decodeMutateRowsResponse, r, this.routing(r.tableName, r.appProfileId), this.deadline());
    return drain(stream, onResponse as (v: unknown) => void, undefined);
  }

  /** The data client's gRPC stub (its channel and credentials) and the Metadata class of its gRPC module. */
  private stub: GrpcStub | undefined;
  private metadataClass: (new () => GrpcMetadata) | undefined;

  private async openStub(): Promise<GrpcStub> {
    const stub = (await this.data.initialize()) as unknown as GrpcStub;
    // The gRPC module the library made the stub with (google-gax's GrpcClient.grpc).
    const grpc = (this.data as unknown as { _gaxGrpc?: { grpc?: { Metadata?: new () => GrpcMetadata } } })._gaxGrpc?.grpc;
    if (typeof stub.makeServerStreamRequest !== 'function' || grpc?.Metadata === undefined) {
      throw new Error('@google-cloud/bigtable: unexpected client internals (is it the pinned 6.5.1?)');
    }
    this.metadataClass = grpc.Metadata;
    this.stub = stub;
    return stub;
  }

  /** The routing header Bigtable expects on data calls (as the library sends it). */
  private routing(tableName: string | null | undefined, appProfileId: string | null | undefined): GrpcMetadata {
    const md = new this.metadataClass!();
    const params: Record<string, string> = {};
    if (tableName !== null && tableName !== undefined) params.table_name = tableName;
    if (appProfileId !== null && appProfileId !== undefined) params.app_profile_id = appProfileId;
    md.set('x-goog-request-params', new URLSearchParams(params).toString());
    return md;
  }

  private deadline(): { deadline: number } {
    return { deadline: Date.now() + this.timeoutMs };
  }

  /** SampleRowKeys: (key, cumulative offset bytes) pairs in key order, the last key empty. */
  async sampleRowKeys(tableName: string): Promise<{ key: Uint8Array; offsetBytes: number }[]> {
    this.calls.sampleRowKeys++;
    const out: { key: Uint8Array; offsetBytes: number }[] = [];
    const stream = this.data.sampleRowKeys(this.withProfile({ tableName }), noStreamRetry(this.timeoutMs)) as unknown as CancellableStream;
    await drain(stream, (v) => {
      const r = v as ProtoTypes.google.bigtable.v2.ISampleRowKeysResponse;
      out.push({ key: asBytes(r.rowKey), offsetBytes: Number(r.offsetBytes ?? 0) });
    }, undefined);
    return out;
  }

  async checkAndMutateRow(req: ICheckAndMutateRowRequest): Promise<boolean> {
    this.calls.checkAndMutateRow++;
    const [resp] = await this.data.checkAndMutateRow(this.withProfile(req), noRetry(this.timeoutMs));
    return resp.predicateMatched === true;
  }

  async readModifyWriteRow(req: IReadModifyWriteRowRequest): Promise<IRow> {
    this.calls.readModifyWriteRow++;
    const [resp] = await this.data.readModifyWriteRow(this.withProfile(req), noRetry(this.timeoutMs));
    return resp.row ?? {};
  }

  async createTable(tableId: string, table: ITable, splits: readonly Uint8Array[]): Promise<void> {
    await this.admin.createTable({
      parent: this.instanceName, tableId, table, initialSplits: splits.map((key) => ({ key: Buffer.from(key) })),
    }, noRetry(this.timeoutMs));
  }

  /** The table with its column families (FULL view would add replication state). */
  async getTable(tableId: string): Promise<ITable> {
    const [t] = await this.admin.getTable({ name: this.tablePath(tableId), view: 'SCHEMA_VIEW' }, noRetry(this.timeoutMs));
    return t;
  }

  /** Sets a family's GC rule (ModifyColumnFamilies), e.g. after a TTL change. */
  async updateGcRule(tableId: string, family: string, gcRule: IGcRule): Promise<void> {
    await this.admin.modifyColumnFamilies({ name: this.tablePath(tableId), modifications: [{ id: family, update: { gcRule } }] }, noRetry(this.timeoutMs));
  }

  /** DropRowRange: the rows with this key prefix, or (undefined) every row of the table. */
  async dropRowRange(tableId: string, prefix: Uint8Array | undefined): Promise<void> {
    await this.admin.dropRowRange({
      name: this.tablePath(tableId),
      ...(prefix === undefined ? { deleteAllDataFromTable: true } : { rowKeyPrefix: Buffer.from(prefix) }),
    }, noRetry(this.timeoutMs));
  }

  async deleteTable(tableId: string): Promise<void> {
    await this.admin.deleteTable({ name: this.tablePath(tableId) }, noRetry(this.timeoutMs));
  }

  /** Table ids of the instance. */
  async listTableIds(): Promise<string[]> {
    const [tables] = await this.admin.listTables({ parent: this.instanceName, view: 'NAME_ONLY' }, { timeout: this.timeoutMs, autoPaginate: true });
    return tables.map((t) => (t.name ?? '').slice(this.instanceName.length + '/tables/'.length));
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.data.close(), this.admin.close()]);
  }
}

/**
 * Abort callbacks per signal: one listener per signal however many calls share it (a
 * query's scans of every salt bucket do), so Node does not warn of a listener leak.
 */
const abortCallbacks = new WeakMap<AbortSignal, Set<() => void>>();

function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let set = abortCallbacks.get(signal);
  if (set === undefined) {
    const callbacks = new Set<() => void>();
    set = callbacks;
    abortCallbacks.set(signal, callbacks);
    signal.addEventListener('abort', () => {
      for (const f of [...callbacks]) f();
    }, { once: true });
  }
  const mine = set;
  mine.add(fn);
  return () => mine.delete(fn);
}

/** Feeds every message of `stream` to `onData`; resolves at its end, rejects on error or abort. */
function drain(stream: CancellableStream, onData: (v: unknown) => void, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    let unlisten = (): void => {};
    const finish = (err?: unknown): void => {
      if (done) return;
      done = true;
      unlisten();
      if (err === undefined) resolve();
      else reject(err);
    };
    const abort = (): void => {
      stream.cancel();
      finish(Object.assign(new Error('operation aborted'), { code: 1 }));
    };
    if (signal?.aborted) {
      abort();
      return;
    }
    if (signal !== undefined) unlisten = onAbort(signal, abort);
    stream.on('data', (v: unknown) => {
      if (done) return;
      try {
        onData(v);
      } catch (err) {
        stream.cancel();
        finish(err);
      }
    });
    stream.on('error', (err: unknown) => finish(err));
    stream.on('end', () => finish());
  });
}

/** Protobuf bytes fields arrive as Buffer (or base64 strings with some loaders). */
export function asBytes(v: Uint8Array | string | null | undefined): Uint8Array {
  if (v === null || v === undefined) return new Uint8Array(0);
  return typeof v === 'string' ? Buffer.from(v, 'base64') : v;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}
