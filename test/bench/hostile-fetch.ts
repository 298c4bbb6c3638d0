// `npm run bench -- hostile-fetch`: what a hostile key server costs. A local server streams a
// 150 MB "key document" and runs a tarpit (accepts, never answers). Each is fetched by Roost's
// document loader (the bounded fetcher) and, as the baseline in the same run, by Fedify's stock
// loader (what Roost used before): RSS growth and time, and how long a tarpit holds the fetch.
// The bounded loader runs first, so the baseline's garbage does not count against it.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getDocumentLoader, type DocumentLoader } from '@fedify/vocab-runtime';
import { boundedDocumentLoader } from '../../src/federation/loaders.ts';
import { table, fmtRatio } from './lib/report.ts';

const HUGE = 150 * 1024 * 1024;
const TARPIT_WATCH_MS = 15_000;

function startServer(): Promise<{ base: string; close(): void }> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const server = http.createServer((req, res) => {
    if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'application/activity+json' });
      let sent = 0;
      const pump = () => {
        while (sent < HUGE) {
          const ok = res.write(sent === 0 ? Buffer.concat([Buffer.from('{"id":"'), chunk]) : chunk);
          sent += chunk.length;
          if (!ok) return void res.once('drain', pump);
        }
        res.end('"}');
      };
      pump();
    }
    // /tarpit: never answered.
  });
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () =>
      r({
        base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

async function measureHuge(load: DocumentLoader, url: string): Promise<{ ms: number; rssMb: number; outcome: string }> {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  let outcome: string;
  try {
    await load(url);
    outcome = 'loaded';
  } catch (e) {
    outcome = `refused: ${(e as Error).message.slice(0, 40)}`;
  }
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { ms, rssMb: (peak - before) / 1048576, outcome };
}

async function measureTarpit(load: DocumentLoader, url: string): Promise<{ ms: number; outcome: string }> {
  const t0 = performance.now();
  const result = await Promise.race([
    load(url).then(
      () => 'loaded',
      (e: Error) => `gave up: ${e.message.slice(0, 30)}`,
    ),
    new Promise<string>((r) => setTimeout(() => r(`still waiting after ${TARPIT_WATCH_MS / 1000} s`), TARPIT_WATCH_MS)),
  ]);
  return { ms: performance.now() - t0, outcome: result };
}

export async function main(): Promise<number> {
  const server = await startServer();
  const bounded = boundedDocumentLoader({ allowPrivateAddresses: true, userAgent: 'bench', lookup: () => undefined });
  const stock = getDocumentLoader({ allowPrivateAddress: true });
  try {
    const b = await measureHuge(bounded, `${server.base}/huge`);
    const s = await measureHuge(stock, `${server.base}/huge`);
    console.log('150 MB key document (peak RSS growth while fetching)');
    console.log(
      table(
        ['loader', 'time', 'RSS growth', 'outcome'],
        [
          ['bounded (Roost)', `${b.ms.toFixed(0)} ms`, `${b.rssMb.toFixed(1)} MB`, b.outcome],
          ['Fedify stock (baseline)', `${s.ms.toFixed(0)} ms`, `${s.rssMb.toFixed(1)} MB`, s.outcome],
        ],
      ),
    );
    console.log(`RSS growth, baseline / bounded: ${fmtRatio(s.rssMb / Math.max(b.rssMb, 0.1))}\n`);
    const tb = await measureTarpit(bounded, `${server.base}/tarpit`);
    const ts = await measureTarpit(stock, `${server.base}/tarpit`);
    console.log('tarpit key server (accepts, never answers)');
    console.log(
      table(
        ['loader', 'held for', 'outcome'],
        [
          ['bounded (Roost)', `${(tb.ms / 1000).toFixed(1)} s`, tb.outcome],
          ['Fedify stock (baseline)', `${(ts.ms / 1000).toFixed(1)} s`, ts.outcome],
        ],
      ),
    );
    return 0;
  } finally {
    server.close();
  }
}
