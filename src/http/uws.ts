// The one place that loads uWebSockets.js. Loading is synchronous (createRequire) so a failure can
// be caught and explained: the usual one on Debian 12 / Ubuntu 22.04 is the binary needing
// GLIBC_2.38, which src/http/patch-uws-glibc.mjs (the postinstall script) fixes.

import { createRequire } from 'node:module';
import type * as UWS from '@btc-vision/uwebsockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket, WebSocket, WebSocketBehavior } from '@btc-vision/uwebsockets.js';
export type Uws = typeof UWS;

let cached: Uws | undefined;

function glibcRuntime(): string | undefined {
  try {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return report?.header?.glibcVersionRuntime;
  } catch {
    return undefined;
  }
}

/** Explain a load failure: why, and what to do. Exported for tests. */
export function explainLoadFailure(err: unknown): string {
  const detail = err instanceof Error ? err.message : String(err);
  const where = `${process.platform}-${process.arch}, Node ${process.version} (ABI ${process.versions.modules})`;
  if (/GLIBC_\d/.test(detail)) {
    const glibc = glibcRuntime();
    return (
      `uWebSockets.js could not be loaded on ${where}: its binary needs a newer glibc than this system's` +
      `${glibc ? ` (${glibc})` : ''}. Patch the binary for this glibc by running \`npm rebuild\` (it runs the ` +
      `postinstall script) or \`node src/http/patch-uws-glibc.mjs\`, then start again; or upgrade the system to ` +
      `glibc >= 2.38.\nOriginal error: ${detail}`
    );
  }
  if (/Cannot find module|MODULE_NOT_FOUND|supports only Node/.test(detail)) {
    return (
      `uWebSockets.js could not be loaded on ${where}: @btc-vision/uwebsockets.js 20.57.0 ships binaries for ` +
      `Node 20, 22, 24 and 25 on glibc Linux, macOS and Windows (x64/arm64). Run \`npm ci\` with Node 24 ` +
      `(npm scripts and npx use node_modules/.bin/node).\nOriginal error: ${detail}`
    );
  }
  return `uWebSockets.js could not be loaded on ${where}. Try \`npm rebuild\`.\nOriginal error: ${detail}`;
}

/** The uWebSockets.js module; throws an Error that says why and what to do when it cannot load. */
export function loadUws(): Uws {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  try {
    cached = require('@btc-vision/uwebsockets.js') as Uws;
  } catch (err) {
    throw new Error(explainLoadFailure(err), { cause: err });
  }
  return cached;
}
