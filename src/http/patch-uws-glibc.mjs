// Make @btc-vision/uwebsockets.js load on glibc < 2.38 (Debian 12 has 2.36).
//
// Runs as the package's `postinstall` (plain JS: must work on the system Node 20 and on Node 24).
//
// Why: upstream builds uWS on a glibc 2.38+ system, where <stdlib.h>/<stdio.h> redirect strtol,
// strtoul and sscanf to their C23 variants __isoc23_strtol, __isoc23_strtoul, __isoc23_sscanf
// (the only difference: they also accept a "0b" binary prefix). Those three symbols are the only
// ones in the binary that need the GLIBC_2.38 version, and older glibcs refuse to load it:
//   version `GLIBC_2.38' not found
//
// What it does, per uws_<platform>_<arch>_<abi>.node of the CURRENT platform+arch, by parsing the
// ELF (ELF64 little-endian, x86_64 or aarch64), and only when the running glibc is older than 2.38:
//   1. .dynsym: each undefined symbol bound to GLIBC_2.38 whose name is __isoc23_X gets its
//      st_name moved forward by 9 bytes so it names the suffix "X" that is already in .dynstr.
//      .dynstr itself is untouched, so no other symbol that the linker tail-merged into that
//      string can be affected. Undefined symbols are not in .gnu.hash (checked), so no hash
//      table needs updating. The .gnu.version entry keeps its index (see 2).
//   2. .gnu.version_r: the GLIBC_2.38 vernaux entry of libc.so.6 gets vna_name pointed at the
//      "GLIBC_2.2.5" (x86_64) / "GLIBC_2.17" (aarch64) string already in .dynstr and vna_hash
//      set to the ELF hash of that name. Its vna_other (the index the versym entries use) stays,
//      so the three symbols now bind to the base version, where strtol/strtoul/sscanf live.
//      A duplicate version need for one library is legal; ld.so checks each entry.
// Anything unexpected (another symbol on GLIBC_2.38, an unknown layout) leaves the file alone
// and says why. The file is rewritten through a temporary file + rename, so a process that has
// the old binary mapped keeps running. A second run finds nothing to change and says so.
//
// Prints one line saying what it did. Exits 0 even when it could not patch (the install must not
// fail for the rest of the project); src/http/uws.ts then explains the load failure.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TAG = 'patch-uws-glibc:';
const NEEDED = [2, 38];
const RENAMES = new Map([
  ['__isoc23_strtol', 'strtol'],
  ['__isoc23_strtoul', 'strtoul'],
  ['__isoc23_sscanf', 'sscanf'],
]);
const PREFIX_LEN = '__isoc23_'.length;
const BASE_VERSION = { 62 /* EM_X86_64 */: 'GLIBC_2.2.5', 183 /* EM_AARCH64 */: 'GLIBC_2.17' };

const SHT_DYNSYM = 11;
const SHT_GNU_HASH = 0x6ffffff6;
const SHT_GNU_VERNEED = 0x6ffffffe;
const SHT_GNU_VERSYM = 0x6fffffff;
const SHN_UNDEF = 0;

/** The classic SysV ELF hash (used by vna_hash). */
export function elfHash(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) {
    h = ((h << 4) + name.charCodeAt(i)) >>> 0;
    const g = h & 0xf0000000;
    if (g !== 0) h ^= g >>> 24;
    h &= ~g >>> 0;
    h >>>= 0;
  }
  return h >>> 0;
}

function parseGlibc(v) {
  const m = /^(\d+)\.(\d+)/.exec(String(v || ''));
  return m ? [Number(m[1]), Number(m[2])] : null;
}

function older(a, b) {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

function cstr(buf, off) {
  const end = buf.indexOf(0, off);
  return buf.toString('latin1', off, end < 0 ? buf.length : end);
}

/** Offset in strtab (relative) of a NUL-terminated string equal to s, or -1. Whole strings or suffixes both work. */
function findString(buf, tabOff, tabSize, s) {
  const needle = Buffer.from(s + '\0', 'latin1');
  const i = buf.subarray(tabOff, tabOff + tabSize).indexOf(needle);
  return i;
}

/**
 * Analyse (and with apply=true, modify `buf` in place) one ELF file.
 * Returns { state: 'patched' | 'already' | 'clean', changes: string[] } or throws with a reason.
 */
export function patchElf(buf, apply) {
  if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('not a 64-bit little-endian ELF');
  const machine = buf.readUInt16LE(18);
  const base = BASE_VERSION[machine];
  if (!base) throw new Error(`unsupported e_machine ${machine}`);
  const shoff = Number(buf.readBigUInt64LE(40));
  const shentsize = buf.readUInt16LE(58);
  const shnum = buf.readUInt16LE(60);
  if (!shoff || !shnum || shentsize < 64) throw new Error('no section headers');

  const sections = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    sections.push({
      type: buf.readUInt32LE(o + 4),
      offset: Number(buf.readBigUInt64LE(o + 24)),
      size: Number(buf.readBigUInt64LE(o + 32)),
      link: buf.readUInt32LE(o + 40),
      info: buf.readUInt32LE(o + 44),
      entsize: Number(buf.readBigUInt64LE(o + 56)),
    });
  }
  const dynsym = sections.find((s) => s.type === SHT_DYNSYM);
  const versym = sections.find((s) => s.type === SHT_GNU_VERSYM);
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  const gnuHash = sections.find((s) => s.type === SHT_GNU_HASH);
  if (!dynsym || !versym || !verneed) throw new Error('no .dynsym/.gnu.version/.gnu.version_r');
  const dynstr = sections[dynsym.link];
  if (!dynstr) throw new Error('bad .dynsym link');
  const str = (off) => cstr(buf, dynstr.offset + off);

  // --- version needs: find libc's GLIBC_2.38 entry (or a previous patch of it) ---
  const target = `GLIBC_${NEEDED[0]}.${NEEDED[1]}`;
  let vnOff = verneed.offset;
  let needIndex = -1; // vna_other of the GLIBC_2.38 entry
  let needAuxOff = -1;
  let baseAuxCount = 0;
  for (let n = 0; n < verneed.info; n++) {
    const file = str(buf.readUInt32LE(vnOff + 4));
    const cnt = buf.readUInt16LE(vnOff + 2);
    let auxOff = vnOff + buf.readUInt32LE(vnOff + 8);
    for (let a = 0; a < cnt; a++) {
      const name = str(buf.readUInt32LE(auxOff + 8));
      if (file.startsWith('libc.so')) {
        if (name === target) {
          needIndex = buf.readUInt16LE(auxOff + 6);
          needAuxOff = auxOff;
        } else if (name === base) {
          baseAuxCount++;
        }
      }
      const next = buf.readUInt32LE(auxOff + 12);
      if (!next) break;
      auxOff += next;
    }
    const next = buf.readUInt32LE(vnOff + 12);
    if (!next) break;
    vnOff += next;
  }

  // --- dynamic symbols ---
  const symCount = Math.floor(dynsym.size / (dynsym.entsize || 24));
  const symoffset = gnuHash ? buf.readUInt32LE(gnuHash.offset + 4) : symCount;
  const toRename = [];
  let leftovers = 0;
  for (let i = 0; i < symCount; i++) {
    const o = dynsym.offset + i * 24;
    const name = str(buf.readUInt32LE(o));
    const ver = buf.readUInt16LE(versym.offset + i * 2) & 0x7fff;
    const isUndef = buf.readUInt16LE(o + 6) === SHN_UNDEF;
    if (RENAMES.has(name)) {
      if (!isUndef) throw new Error(`${name} is defined here, refusing`);
      if (i >= symoffset) throw new Error(`${name} is in .gnu.hash, refusing`);
      if (needIndex < 0 || ver !== needIndex) { leftovers++; continue; }
      toRename.push({ i, o, name });
    } else if (needIndex >= 0 && ver === needIndex) {
      throw new Error(`symbol ${name} also needs ${target}, cannot patch`);
    }
  }
  if (leftovers) throw new Error(`__isoc23_* symbols not bound to ${target}: unexpected layout`);

  if (needIndex < 0) {
    // Nothing needs 2.38 any more. Ours if libc lists the base version twice.
    return { state: baseAuxCount > 1 ? 'already' : 'clean', changes: [] };
  }

  const baseNameOff = findString(buf, dynstr.offset, dynstr.size, base);
  if (baseNameOff < 0) throw new Error(`no "${base}" string in .dynstr`);
  const changes = [];
  for (const s of toRename) {
    const oldOff = buf.readUInt32LE(s.o);
    const newOff = oldOff + PREFIX_LEN;
    if (str(newOff) !== RENAMES.get(s.name)) throw new Error(`unexpected .dynstr content at ${s.name}`);
    if (apply) buf.writeUInt32LE(newOff, s.o);
    changes.push(`${s.name}->${RENAMES.get(s.name)}`);
  }
  if (apply) {
    buf.writeUInt32LE(elfHash(base), needAuxOff);
    buf.writeUInt32LE(baseNameOff, needAuxOff + 8);
  }
  changes.push(`${target}->${base}`);
  return { state: 'patched', changes };
}

/**
 * Read-only view of what matters here, for tests and diagnostics: the version needs
 * ({ file, name, hash, index }) and the undefined dynamic symbols ({ name, version }).
 */
export function inspectElf(buf) {
  if (buf.length < 64 || buf.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (buf[4] !== 2 || buf[5] !== 1) throw new Error('not a 64-bit little-endian ELF');
  const shoff = Number(buf.readBigUInt64LE(40));
  const shentsize = buf.readUInt16LE(58);
  const shnum = buf.readUInt16LE(60);
  const sec = (type) => {
    for (let i = 0; i < shnum; i++) {
      const o = shoff + i * shentsize;
      if (buf.readUInt32LE(o + 4) === type) {
        return { offset: Number(buf.readBigUInt64LE(o + 24)), size: Number(buf.readBigUInt64LE(o + 32)), link: buf.readUInt32LE(o + 40), info: buf.readUInt32LE(o + 44) };
      }
    }
    return null;
  };
  const dynsym = sec(SHT_DYNSYM);
  const versym = sec(SHT_GNU_VERSYM);
  const verneed = sec(SHT_GNU_VERNEED);
  if (!dynsym || !versym || !verneed) throw new Error('no .dynsym/.gnu.version/.gnu.version_r');
  const strOff = Number(buf.readBigUInt64LE(shoff + dynsym.link * shentsize + 24));
  const str = (off) => cstr(buf, strOff + off);
  const needs = [];
  const byIndex = new Map();
  let vnOff = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    const file = str(buf.readUInt32LE(vnOff + 4));
    let auxOff = vnOff + buf.readUInt32LE(vnOff + 8);
    for (let a = 0; a < buf.readUInt16LE(vnOff + 2); a++) {
      const need = { file, name: str(buf.readUInt32LE(auxOff + 8)), hash: buf.readUInt32LE(auxOff), index: buf.readUInt16LE(auxOff + 6) };
      needs.push(need);
      byIndex.set(need.index, need.name);
      const next = buf.readUInt32LE(auxOff + 12);
      if (!next) break;
      auxOff += next;
    }
    const next = buf.readUInt32LE(vnOff + 12);
    if (!next) break;
    vnOff += next;
  }
  const undefinedSymbols = [];
  for (let i = 0; i < Math.floor(dynsym.size / 24); i++) {
    const o = dynsym.offset + i * 24;
    if (buf.readUInt16LE(o + 6) !== SHN_UNDEF) continue;
    const name = str(buf.readUInt32LE(o));
    if (!name) continue;
    const ver = buf.readUInt16LE(versym.offset + i * 2) & 0x7fff;
    undefinedSymbols.push({ name, version: byIndex.get(ver) ?? null });
  }
  return { needs, undefinedSymbols };
}

function uwsDir() {
  const require = createRequire(import.meta.url);
  try {
    return path.dirname(require.resolve('@btc-vision/uwebsockets.js'));
  } catch {
    return null;
  }
}

function main() {
  if (process.platform !== 'linux') {
    console.log(`${TAG} ${process.platform} is not Linux, nothing to do`);
    return;
  }
  if (process.report && 'excludeNetwork' in process.report) process.report.excludeNetwork = true;
  const header = process.report?.getReport?.().header ?? {};
  const runtime = parseGlibc(header.glibcVersionRuntime);
  if (!runtime) {
    console.log(`${TAG} not a glibc system (musl?), nothing to do`);
    return;
  }
  const rt = runtime.join('.');
  if (!older(runtime, NEEDED)) {
    console.log(`${TAG} glibc ${rt} >= ${NEEDED.join('.')}, nothing to do`);
    return;
  }
  const dir = uwsDir();
  if (!dir) {
    console.log(`${TAG} @btc-vision/uwebsockets.js is not installed, nothing to do`);
    return;
  }
  const prefix = `uws_${process.platform}_${process.arch}_`;
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.node')).sort();
  const patched = [];
  const already = [];
  const clean = [];
  const failed = [];
  for (const f of files) {
    const file = path.join(dir, f);
    try {
      const buf = fs.readFileSync(file);
      const res = patchElf(buf, true);
      if (res.state === 'patched') {
        // Re-check the result before replacing the file.
        if (patchElf(Buffer.from(buf), false).state !== 'already') throw new Error('verification after patch failed');
        const tmp = `${file}.tmp-${process.pid}`;
        fs.writeFileSync(tmp, buf, { mode: fs.statSync(file).mode });
        fs.renameSync(tmp, file);
        patched.push(f);
      } else if (res.state === 'already') already.push(f);
      else clean.push(f);
    } catch (err) {
      failed.push(`${f} (${err && err.message ? err.message : err})`);
    }
  }
  const parts = [];
  if (patched.length) parts.push(`patched ${patched.length} (${patched.join(', ')}): __isoc23_strtol/strtoul/sscanf -> strtol/strtoul/sscanf, GLIBC_2.38 -> base version`);
  if (already.length) parts.push(`${already.length} already patched, unchanged`);
  if (clean.length) parts.push(`${clean.length} do not need GLIBC_2.38, unchanged`);
  if (failed.length) parts.push(`WARNING could not patch ${failed.join('; ')}`);
  if (!files.length) parts.push(`no ${prefix}*.node binaries found in ${dir}`);
  console.log(`${TAG} glibc ${rt} < ${NEEDED.join('.')} on ${process.platform}-${process.arch}: ${parts.join('; ')}`);
}

// Run when executed directly (node src/http/patch-uws-glibc.mjs), not when imported by a test.
const invoked = process.argv[1] && path.resolve(process.argv[1]);
if (invoked && fileURLToPath(import.meta.url) === invoked) main();
