// `npm run bench -- <name>`: runs test/bench/<name>.ts (which exports `main(args)`).
// With no name, lists the benchmarks.

import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = import.meta.dirname;
const [name, ...args] = process.argv.slice(2);
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('-server.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

if (!name || !/^[a-z0-9][a-z0-9-]*$/.test(name) || !existsSync(path.join(dir, `${name}.ts`))) {
  console.error(`usage: npm run bench -- <name> [args]\navailable: ${available.join(', ')}`);
  process.exit(name ? 1 : 0);
}

const mod = (await import(pathToFileURL(path.join(dir, `${name}.ts`)).href)) as { main?: (args: string[]) => Promise<number | void> };
if (typeof mod.main !== 'function') {
  console.error(`test/bench/${name}.ts does not export main(args)`);
  process.exit(1);
}
const code = await mod.main(args);
process.exit(typeof code === 'number' ? code : 0);
