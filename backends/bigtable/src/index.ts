/** Horae's Store backend on Cloud Bigtable (see ../README.md). */
export { bigtableCapabilities, openBigtableStore } from './bigtable-store.js';
export type { BigtableStoreOptions } from './bigtable-store.js';
export { parseBigtableUrl } from './url.js';
