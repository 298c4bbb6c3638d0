// The postinstall patch for uWS on glibc < 2.38, and the loader's explanation when uWS cannot load.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { elfHash, inspectElf, patchElf } from '../../src/http/patch-uws-glibc.mjs';
import { explainLoadFailure, loadUws } from '../../src/http/uws.ts';

const root = path.resolve(import.meta.dirname, '../..');
const script = path.join(root, 'src/http/patch-uws-glibc.mjs');
const uwsDir = path.dirname(createRequire(import.meta.url).resolve('@btc-vision/uwebsockets.js'));
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
const [major, minor] = (glibc ?? '0.0').split('.').map(Number);
const oldGlibc = process.platform === 'linux' && glibc !== undefined && (major < 2 || (major === 2 && minor < 38));
const binaries = readdirSync(uwsDir).filter((f) => f.startsWith(`uws_${process.platform}_${process.arch}_`) && f.endsWith('.node'));

type Inspect = { needs: Array<{ file: string; name: string; hash: number }>; undefinedSymbols: Array<{ name: string; version: string | null }> };

describe('patch-uws-glibc', () => {
  it('computes SysV ELF hashes of version names', () => {
    expect(elfHash('GLIBC_2.2.5')).toBe(0x09691a75);
    expect(elfHash('GLIBC_2.38')).toBe(0x069691b8);
    expect(elfHash('GLIBC_2.17')).toBe(0x06969197);
  });

  it('refuses what is not a 64-bit ELF', () => {
    expect(() => patchElf(Buffer.from('not an elf at all, just text................................................'), false)).toThrowError('not an ELF file');
  });

  it.runIf(oldGlibc)('left this platform’s binaries needing nothing newer than GLIBC_2.36, with consistent hashes', () => {
    expect(binaries.length).toBeGreaterThan(0);
    for (const f of binaries) {
      const info: Inspect = inspectElf(readFileSync(path.join(uwsDir, f)));
      expect(info.undefinedSymbols.filter((s) => s.name.startsWith('__isoc23_'))).toEqual([]);
      expect(info.undefinedSymbols.filter((s) => s.version === 'GLIBC_2.38')).toEqual([]);
      expect(info.needs.filter((n) => n.name === 'GLIBC_2.38')).toEqual([]);
      for (const n of info.needs) expect(n.hash).toBe(elfHash(n.name));
      for (const name of ['strtol', 'strtoul']) {
        expect(info.undefinedSymbols.filter((s) => s.name === name).length).toBeGreaterThan(0);
      }
      expect(patchElf(readFileSync(path.join(uwsDir, f)), false).state).toBe('already');
    }
  });

  it('is idempotent: a second run changes nothing and says so', () => {
    const hashes = () => binaries.map((f) => createHash('sha256').update(readFileSync(path.join(uwsDir, f))).digest('hex'));
    const before = hashes();
    const out = execFileSync(process.execPath, [script], { encoding: 'utf8' }).trim();
    expect(out.split('\n')).toHaveLength(1);
    if (oldGlibc) expect(out).toBe(`patch-uws-glibc: glibc ${major}.${minor} < 2.38 on linux-${process.arch}: ${binaries.length} already patched, unchanged`);
    else expect(out).toMatch(/nothing to do$/);
    expect(hashes()).toEqual(before);
  });

  it('loads uWS', () => {
    expect(typeof loadUws().App).toBe('function');
  });
});

describe('uWS load failure', () => {
  it('explains a glibc mismatch and what to do', () => {
    const msg = explainLoadFailure(new Error("/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by uws_linux_x64_137.node)"));
    expect(msg).toContain('needs a newer glibc');
    expect(msg).toContain('`npm rebuild`');
    expect(msg).toContain('`node src/http/patch-uws-glibc.mjs`');
    expect(msg).toContain('glibc >= 2.38');
    expect(msg).toContain("Original error: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found");
  });

  it('explains a missing binary', () => {
    expect(explainLoadFailure(new Error("Cannot find module './uws_linux_riscv64_137.node'"))).toContain('ships binaries for Node 20, 22, 24 and 25');
  });
});
