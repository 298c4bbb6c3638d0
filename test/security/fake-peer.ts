/**
 * A hostile remote server for tests: a node:http server on loopback with a real RSA key pair,
 * serving an actor document (whose fields a test sets) and a few traps — a 150 MB key document
 * streamed with backpressure (never allocated), a tarpit that accepts and never answers, a
 * JSON-LD context that counts its fetches. It signs its deliveries with real HTTP signatures
 * (Fedify's signRequest, draft-cavage, as Mastodon signs).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { generateCryptoKeyPair, signRequest } from '@fedify/fedify';
import { exportSpki } from '@fedify/vocab-runtime';

export const AS_CONTEXT = [
  'https://www.w3.org/ns/activitystreams',
  'https://w3id.org/security/v1',
  { schema: 'http://schema.org#', PropertyValue: 'schema:PropertyValue', value: 'schema:value' },
];

export interface FakePeer {
  base: string;
  actorId: string;
  keyId: URL;
  /** Every request the peer received, as "METHOD path". */
  hits: string[];
  /** Bytes the peer wrote of its 150 MB documents before the client went away. */
  hugeBytesSent: number;
  /** When the tarpit's sockets closed (ms since epoch), one per connection. */
  tarpitClosedAt: number[];
  /** When the tarpit received a request (ms since epoch), one per request. */
  tarpitOpenedAt: number[];
  /** The actor's mutable attributes (name, summary, attachment, url, icon, image…). */
  actor: Record<string, unknown>;
  actorJson(): Record<string, unknown>;
  /** POSTs `body` to `url`, signed with the actor's key (or `keyId` to point elsewhere). */
  deliver(url: string, body: unknown, opts?: { keyId?: URL; sign?: boolean; headers?: Record<string, string> }): Promise<Response>;
  /** The request deliver() would send, signed, not sent (to replay it byte for byte). */
  signed(url: string, body: unknown, opts?: { keyId?: URL; headers?: Record<string, string> }): Promise<Request>;
  close(): Promise<void>;
}

const HUGE_BYTES = 150 * 1024 * 1024;

export async function startFakePeer(): Promise<FakePeer> {
  const keys = await generateCryptoKeyPair('RSASSA-PKCS1-v1_5');
  const pem = await exportSpki(keys.publicKey);
  const sockets = new Set<Socket>();
  const peer = {
    hits: [] as string[],
    hugeBytesSent: 0,
    tarpitClosedAt: [] as number[],
    tarpitOpenedAt: [] as number[],
    actor: {} as Record<string, unknown>,
  } as FakePeer;

  const streamHuge = (res: http.ServerResponse, declareLength: boolean) => {
    res.writeHead(200, { 'content-type': 'application/activity+json', ...(declareLength ? { 'content-length': String(HUGE_BYTES) } : {}) });
    // A JSON string that never ends: 64 KiB of "a" at a time, written only when the socket drains.
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < HUGE_BYTES) {
        const ok = res.write(sent === 0 ? Buffer.concat([Buffer.from('{"id":"'), chunk]) : chunk);
        sent += chunk.length;
        peer.hugeBytesSent = Math.max(peer.hugeBytesSent, sent);
        if (!ok) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => undefined);
    pump();
  };

  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    peer.hits.push(`${req.method} ${path}`);
    if (path === '/users/mallory') {
      res.writeHead(200, { 'content-type': 'application/activity+json' });
      res.end(JSON.stringify(peer.actorJson()));
    } else if (path === '/huge') {
      streamHuge(res, false);
    } else if (path === '/huge-declared') {
      streamHuge(res, true);
    } else if (path === '/tarpit') {
      // Accept, read the request, never answer.
      peer.tarpitOpenedAt.push(Date.now());
      req.socket.once('close', () => peer.tarpitClosedAt.push(Date.now()));
    } else if (path === '/context') {
      res.writeHead(200, { 'content-type': 'application/ld+json' });
      res.end(JSON.stringify({ '@context': { evil: 'https://evil.example/ns#' } }));
    } else {
      res.writeHead(404).end();
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.base = base;
  peer.actorId = `${base}/users/mallory`;
  peer.keyId = new URL(`${base}/users/mallory#main-key`);
  peer.actorJson = () => ({
    '@context': AS_CONTEXT,
    id: peer.actorId,
    type: 'Person',
    preferredUsername: 'mallory',
    inbox: `${peer.actorId}/inbox`,
    outbox: `${peer.actorId}/outbox`,
    followers: `${peer.actorId}/followers`,
    following: `${peer.actorId}/following`,
    ...peer.actor,
    publicKey: { id: peer.keyId.href, owner: peer.actorId, publicKeyPem: pem },
  });
  peer.signed = async (url, body, opts = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const request = new Request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/activity+json', ...opts.headers },
      body: text,
    });
    return signRequest(request, keys.privateKey, opts.keyId ?? peer.keyId, { spec: 'draft-cavage-http-signatures-12' });
  };
  peer.deliver = async (url, body, opts = {}) => {
    if (opts.sign !== false) return fetch(await peer.signed(url, body, opts));
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return fetch(new Request(url, { method: 'POST', headers: { 'content-type': 'application/activity+json', ...opts.headers }, body: text }));
  };
  peer.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return peer;
}
