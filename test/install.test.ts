/**
 * A production install (`npm ci --omit=dev && npm start`) must run: nothing on the runtime path
 * imports a devDependency, Roost refuses an old Node with a clear message, and npm on the system's
 * Node prints no EBADENGINE wall (it checks engines against the Node that runs npm, not the
 * Node 24 that runs Roost).
 */
import { describe, it, expect } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { nodeVersionProblem } from '../src/node-version.mjs';

const root = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Module specifiers a file loads at run time: `import type` and `export type` are erased. */
function runtimeSpecifiers(source: string): string[] {
  const out: string[] = [];
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  for (const m of code.matchAll(/(?:^|[\n;])\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/g)) {
    if (!m[2]) out.push(m[4]);
  }
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]);
  return out;
}

function packageOf(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

describe('a production install', () => {
  it('loads nothing from devDependencies on the way from src/roost.mjs (the roost command)', () => {
    const builtins = new Set(builtinModules);
    const seen = new Set<string>();
    const packages = new Map<string, string>();
    const queue = [path.join(root, 'src/roost.mjs')];
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const spec of runtimeSpecifiers(readFileSync(file, 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = path.resolve(path.dirname(file), spec);
          if (existsSync(target) && /\.(ts|mts|js|mjs)$/.test(target)) queue.push(target);
        } else if (!spec.startsWith('node:') && !builtins.has(spec)) {
          packages.set(packageOf(spec), path.relative(root, file));
        }
      }
    }
    expect(seen.size).toBeGreaterThan(50); // the walk reached the whole server
    expect(packages.has('@fedify/fedify')).toBe(true);
    const fromDev = [...packages].filter(([p]) => !(p in pkg.dependencies)).map(([p, f]) => `${p} (imported by ${f})`);
    expect(fromDev).toEqual([]);
  });

  it('states Node ≥ 20 for npm, and runs the code only on Node 24', () => {
    expect(pkg.engines.node).toBe('>=20');
    expect(pkg.dependencies.node).toMatch(/^24\./);
    expect(nodeVersionProblem('24.0.0')).toBeNull();
    expect(nodeVersionProblem('20.20.2')).toBe(
      'roost: Node.js 24 or newer runs Roost; this is Node.js 20.20.2. npm installs Node 24 into node_modules/.bin: ' +
        'start Roost with `npm start` or `npx roost …`, which use it, rather than calling `node` directly.',
    );
  });

  it('the roost command on the system Node says which Node it needs, or runs', () => {
    const PATH = (process.env.PATH ?? '').split(path.delimiter).filter((d) => !d.includes('node_modules')).join(path.delimiter);
    const system = spawnSync('node', ['-p', 'process.versions.node'], { env: { PATH }, encoding: 'utf8' });
    expect(system.status).toBe(0);
    const res = spawnSync('node', [path.join(root, 'src/roost.mjs'), '--version'], { cwd: root, env: { PATH }, encoding: 'utf8' });
    const problem = nodeVersionProblem(system.stdout.trim());
    if (problem) expect([res.status, res.stderr, res.stdout]).toEqual([1, `${problem}\n`, '']);
    else expect([res.status, res.stdout]).toEqual([0, `roost ${pkg.version}\n`]);
    // And on this Node (the project's 24), through npm as a newcomer runs it.
    const npx = spawnSync('npm', ['run', '--silent', 'roost', '--', '--version'], { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, encoding: 'utf8' });
    expect([npx.status, npx.stdout]).toEqual([0, `roost ${pkg.version}\n`]);
  });

  it('npm on the system Node prints no EBADENGINE warning for a production install', () => {
    // The system npm, as a newcomer runs it: node_modules/.bin (where Node 24 lives) off PATH.
    const PATH = (process.env.PATH ?? '').split(path.delimiter).filter((d) => !d.includes('node_modules')).join(path.delimiter);
    const res = spawnSync('npm', ['install', '--dry-run', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: root,
      env: { PATH, HOME: process.env.HOME ?? '/tmp' },
      encoding: 'utf8',
    });
    expect(res.status).toBe(0);
    expect(`${res.stdout}${res.stderr}`).not.toContain('EBADENGINE');
  });
});
