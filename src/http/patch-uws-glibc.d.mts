// Types for patch-uws-glibc.mjs (plain JS so it runs on the system Node 20 as the postinstall).

export function elfHash(name: string): number;

export function patchElf(buf: Buffer, apply: boolean): { state: 'patched' | 'already' | 'clean'; changes: string[] };

export function inspectElf(buf: Buffer): {
  needs: Array<{ file: string; name: string; hash: number; index: number }>;
  undefinedSymbols: Array<{ name: string; version: string | null }>;
};
