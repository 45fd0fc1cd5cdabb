/** Types of scripts/build.mjs (plain JavaScript so a production install builds without TypeScript). */
/** The server's TypeScript sources (core/, tsdb/), relative to root. */
export function serverSources(root?: string): string[];
/** The first source changed after the last build ('dist/BUILD.json' when there is none), or undefined when current. */
export function isStale(root?: string): string | undefined;
/** Transpiles core/ and tsdb/ into root/dist and bundles the UI into root/ui/dist. */
export function build(root?: string): Promise<{ files: number; ms: number }>;
