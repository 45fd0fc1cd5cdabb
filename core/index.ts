/**
 * Public surface of the storage core: the Store seam and the backends that implement it.
 * The time-series layer imports from here (composition root) or from core/api only.
 */
export * from './api/store.js';
export * from './api/errors.js';
export * from './api/bytes.js';
export * from './api/row-transform.js';
export { openEmbeddedStore, embeddedCapabilities } from './embedded/embedded-store.js';
export type { EmbeddedOptions, EmbeddedStoreExtras } from './embedded/embedded-store.js';
export { openMemoryStore } from './memory/memory-store.js';
export { DEFAULT_ENGINE_OPTIONS } from './lsm/options.js';
export { verifyStoreFiles, formatStoreFileProblem } from './tools/verify.js';
export type { StoreFileProblem, StoreFileKind, VerifyStoreResult } from './tools/verify.js';
