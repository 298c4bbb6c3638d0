/** Every reference file a test needs is in the repository: no test skips for want of one. */
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(p);
    return /\.ts$/.test(e.name) ? [p] : [];
  });
}

describe('test fixtures', () => {
  it('no test reads a reference file outside the repository, or skips for want of one', () => {
    const offenders: string[] = [];
    for (const file of [...testFiles(path.join(root, 'test')), ...testFiles(path.join(root, 'src')), ...testFiles(path.join(root, 'actors'))]) {
      if (file === path.join(root, 'test/fixtures.test.ts') || file === path.join(root, 'test/fixtures/extract-openapi-schemas.ts')) continue;
      const text = readFileSync(file, 'utf8');
      if (/shared\/reference|skip(If)?\(\s*!\s*existsSync|skip:\s*!\s*existsSync|openApiAvailable/.test(text)) offenders.push(path.relative(root, file));
    }
    expect(offenders).toEqual([]);
  });

  it('the OpenAPI fixture holds the components the tests check, each with what it refers to', () => {
    const doc = JSON.parse(readFileSync(path.join(root, 'test/fixtures/mastodon-openapi-schemas.json'), 'utf8'));
    const schemas = doc.components.schemas as Record<string, unknown>;
    for (const c of ['Instance', 'V1Instance', 'Rule', 'PrivacyPolicy', 'ExtendedDescription', 'Account']) expect(schemas).toHaveProperty(c);
    const refs = [...JSON.stringify(schemas).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.filter((r) => !(r in schemas))).toEqual([]);
    expect(doc['x-extracted'].sha256).toBe('516725a2c5e09c4de5b47305cb515ee03c7e929967432441003624fe35378942');
  });
});
