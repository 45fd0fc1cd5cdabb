/** Types of ui/build.mjs (plain JavaScript so `npm run build` needs no TypeScript loader). */
export interface BuildUiOptions {
  /** Default ui/src/pages. */
  readonly srcDir?: string;
  /** Default ui/dist. */
  readonly outDir?: string;
  /** Default true. */
  readonly minify?: boolean;
}
/** Page names: directories of srcDir holding a main.ts. */
export function findPages(srcDir?: string): string[];
/** Bundles every page; resolves to the files written per page, relative to outDir. */
export function buildUi(options?: BuildUiOptions): Promise<Record<string, string[]>>;
