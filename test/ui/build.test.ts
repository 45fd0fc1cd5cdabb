/** ui/build.mjs on a scratch source tree: hashed bundles, rewritten HTML, stale files, errors. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildUi, findPages } from '../../ui/build.mjs';

let root: string;
let src: string;
let out: string;

function page(name: string, files: Record<string, string>): void {
  mkdirSync(join(src, name), { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(src, name, f), text);
}

const HTML = '<!doctype html><link rel="stylesheet" href="./main.css"><script type="module" src="./main.js"></script>';

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'horae-ui-build-'));
  src = join(root, 'pages');
  out = join(root, 'dist');
  mkdirSync(join(root, 'lib'), { recursive: true });
  writeFileSync(join(root, 'lib', 'greet.ts'), 'export const greet = (n: string): string => `hi ${n}`;\n');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('buildUi', () => {
  it('bundles every page with its CSS and points the HTML at the hashed files', async () => {
    page('alpha', { 'index.html': HTML, 'main.ts': "import './style.css';\nimport { greet } from '../../lib/greet.js';\ndocument.title = greet('alpha');\n", 'style.css': 'body { color: red }\n' });
    page('beta', { 'index.html': HTML, 'main.ts': 'document.title = "beta";\n' });
    mkdirSync(join(src, 'not-a-page'));
    expect(findPages(src)).toEqual(['alpha', 'beta']);
    const built = await buildUi({ srcDir: src, outDir: out });
    expect(Object.keys(built)).toEqual(['alpha', 'beta']);
    const files = readdirSync(join(out, 'alpha')).sort();
    const js = files.find((f) => /^main-[A-Z0-9]{8}\.js$/.test(f));
    const css = files.find((f) => /^main-[A-Z0-9]{8}\.css$/.test(f));
    expect(js).toBeDefined();
    expect(css).toBeDefined();
    const html = readFileSync(join(out, 'alpha', 'index.html'), 'utf8');
    expect(html).toContain(`src="/ui/alpha/${js}"`);
    expect(html).toContain(`href="/ui/alpha/${css}"`);
    expect(readFileSync(join(out, 'alpha', js!), 'utf8')).toContain('hi ');
    // A page without CSS loses the stylesheet link instead of pointing at nothing.
    expect(readFileSync(join(out, 'beta', 'index.html'), 'utf8')).not.toContain('main.css');
  });

  it('removes the stale hashed files of a page when it changes', async () => {
    page('alpha', { 'index.html': HTML, 'main.ts': 'document.title = "one";\n' });
    await buildUi({ srcDir: src, outDir: out });
    const first = readdirSync(join(out, 'alpha')).filter((f) => f.endsWith('.js'));
    writeFileSync(join(src, 'alpha', 'main.ts'), 'document.title = "two";\n');
    await buildUi({ srcDir: src, outDir: out });
    const second = readdirSync(join(out, 'alpha')).filter((f) => f.endsWith('.js'));
    expect(second).toHaveLength(1);
    expect(second).not.toEqual(first);
    expect(existsSync(join(out, 'alpha', first[0]!))).toBe(false);
  });

  it('fails with the reason on a page without index.html or with a syntax error', async () => {
    page('alpha', { 'main.ts': 'export {};\n' });
    await expect(buildUi({ srcDir: src, outDir: out })).rejects.toThrow('page "alpha" has main.ts but no index.html');
    writeFileSync(join(src, 'alpha', 'index.html'), HTML);
    writeFileSync(join(src, 'alpha', 'main.ts'), 'const = ;\n');
    await expect(buildUi({ srcDir: src, outDir: out })).rejects.toThrow(/main\.ts/);
  });
});
