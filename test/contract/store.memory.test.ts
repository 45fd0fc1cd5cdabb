/** The Store contract for the in-memory reference store (which is also the test oracle). */
import { MEMORY_STORE_CAPABILITIES, openMemoryStore } from '../../core/memory/memory-store.js';
import { storeContract } from './store-contract.js';

storeContract('memory', {
  capabilities: MEMORY_STORE_CAPABILITIES,
  open: ({ clock }) => openMemoryStore({ clock }),
  heavy: true,
});
