/**
 * A local plain-HTTP push service (a fake of the outside world): it checks every request's VAPID
 * JWT (ES256) against the instance's public key and its audience, decrypts the body with http_ece
 * (aes128gcm, or the legacy aesgcm with its Encryption and Crypto-Key headers) using the
 * subscription's prime256v1 key, and records what it got. Each path can be told what to answer.
 */
import { createECDH, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error http_ece ships no types
import ece from 'http_ece';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The decrypted payload, parsed. */
  payload: any;
  jwt: { aud: string; exp: number; sub: string };
  at: number;
}

export interface PushClient {
  endpoint: string;
  p256dh: string;
  auth: string;
  ecdh: ECDH;
  authSecret: Buffer;
}

export interface PushService {
  url: string;
  received: Received[];
  /** Errors found in requests (bad signature, undecryptable body): must stay empty. */
  problems: string[];
  /** A new subscriber key pair and endpoint at `path`. */
  client(path: string): PushClient;
  /** The next answers for `path` (status and headers), then 201. */
  answer(path: string, ...answers: { status: number; headers?: Record<string, string> }[]): void;
  close(): Promise<void>;
}

function publicKeyOf(raw: Buffer) {
  return createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') },
    format: 'jwk',
  });
}

export function verifyJwt(jwt: string, serverKey: string): { aud: string; exp: number; sub: string } {
  const [h, p, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
  if (header.alg !== 'ES256' || header.typ !== 'JWT') throw new Error(`bad JWT header ${JSON.stringify(header)}`);
  const ok = verify('sha256', Buffer.from(`${h}.${p}`), { key: publicKeyOf(Buffer.from(serverKey, 'base64url')), dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'));
  if (!ok) throw new Error('VAPID JWT signature does not verify');
  return JSON.parse(Buffer.from(p!, 'base64url').toString());
}

export async function startPushService(serverKey: string): Promise<PushService> {
  const received: Received[] = [];
  const problems: string[] = [];
  const clients = new Map<string, PushClient>();
  const answers = new Map<string, { status: number; headers?: Record<string, string> }[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      try {
        const client = clients.get(path);
        if (!client) throw new Error(`unknown endpoint ${path}`);
        const body = Buffer.concat(chunks);
        const encoding = req.headers['content-encoding'];
        let jwt: string;
        let decrypted: Buffer;
        if (encoding === 'aes128gcm') {
          const m = /^vapid t=([^,\s]+), k=(\S+)$/.exec(req.headers.authorization ?? '');
          if (!m) throw new Error(`bad Authorization ${req.headers.authorization}`);
          if (m[2] !== serverKey) throw new Error('k= is not the server key');
          jwt = m[1]!;
          decrypted = ece.decrypt(body, { version: 'aes128gcm', privateKey: client.ecdh, authSecret: client.authSecret.toString('base64url') });
        } else if (encoding === 'aesgcm') {
          const m = /^WebPush (\S+)$/.exec(req.headers.authorization ?? '');
          if (!m) throw new Error(`bad Authorization ${req.headers.authorization}`);
          jwt = m[1]!;
          const cryptoKey = String(req.headers['crypto-key']);
          const dh = /dh=([^;,]+)/.exec(cryptoKey)![1]!;
          if (/p256ecdsa=([^;,]+)/.exec(cryptoKey)![1] !== serverKey) throw new Error('p256ecdsa is not the server key');
          const salt = /salt=([^;,]+)/.exec(String(req.headers.encryption))![1]!;
          decrypted = ece.decrypt(body, { version: 'aesgcm', privateKey: client.ecdh, dh, salt, authSecret: client.authSecret.toString('base64url') });
        } else throw new Error(`unknown content-encoding ${encoding}`);
        const claims = verifyJwt(jwt, serverKey);
        if (claims.aud !== url) throw new Error(`aud ${claims.aud} is not ${url}`);
        received.push({ path, headers: req.headers, payload: JSON.parse(decrypted.toString('utf8')), jwt: claims, at: Date.now() });
      } catch (e) {
        problems.push((e as Error).message);
        res.writeHead(400).end();
        return;
      }
      const next = answers.get(path)?.shift() ?? { status: 201 };
      res.writeHead(next.status, next.headers).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    problems,
    client(path) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const authSecret = randomBytes(16);
      const c = { endpoint: `${url}${path}`, p256dh: ecdh.getPublicKey().toString('base64url'), auth: authSecret.toString('base64url'), ecdh, authSecret };
      clients.set(path, c);
      return c;
    },
    answer(path, ...list) {
      answers.set(path, [...(answers.get(path) ?? []), ...list]);
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
