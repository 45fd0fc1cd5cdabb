/** Side-effect CSS imports: esbuild bundles them into the page's main-<hash>.css. */
declare module '*.css';
