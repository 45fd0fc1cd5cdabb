/**
 * `npm run docs:config`: writes docs/CONFIG.md from the config table (run from the
 * repository's root, as npm does).
 */
import { writeFileSync } from 'node:fs';
import { configMarkdown } from './config-doc.js';

writeFileSync('docs/CONFIG.md', configMarkdown());
process.stdout.write('wrote docs/CONFIG.md\n');
