/**
 * HTTP signatures (draft-cavage-http-signatures-12) as each software signs, and the one verifier
 * every peer's inbox uses.
 *
 * How each signs (headers in the order it lists them, which is the order of the signing string):
 *
 * - Mastodon: `algorithm="rsa-sha256"`, POST `(request-target) host date digest content-type`,
 *   GET `(request-target) host date accept` (its Request class signs every header it sets but
 *   User-Agent and Accept-Encoding; Roost's own transport, src/federation/transport.ts, signs the
 *   same POST set).
 * - GoToSocial: `algorithm="hs2019"` (the key's metadata decides; the signature is RSA-SHA256),
 *   POST `(request-target) host date digest`, GET `(request-target) host date`. Source: GoToSocial's
 *   documentation, "HTTP Signatures" (federation/http_signatures), and its keyId ends in
 *   `/main-key` rather than a fragment.
 * - Misskey: `algorithm="rsa-sha256"`, POST `(request-target) date host digest`, GET
 *   `(request-target) date host accept` (ApRequestService's createSignedPost / createSignedGet).
 * - Pleroma: `algorithm="rsa-sha256"`, POST `(request-target) content-length date digest host`,
 *   GET `(request-target) date host`: its Publisher signs a map of those headers and the
 *   http_signatures library lists a map's keys, which Erlang orders by name.
 *
 * Dates come from the lab clock (`Date` in IMF-fixdate), never the wall clock.
 */
import { createHash, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import type { PeerSoftware } from './types.ts';

export interface SignatureStyle {
  algorithm: 'rsa-sha256' | 'hs2019';
  post: readonly string[];
  get: readonly string[];
}

export const SIGNATURE_STYLES: Record<PeerSoftware, SignatureStyle> = {
  mastodon: { algorithm: 'rsa-sha256', post: ['(request-target)', 'host', 'date', 'digest', 'content-type'], get: ['(request-target)', 'host', 'date', 'accept'] },
  gotosocial: { algorithm: 'hs2019', post: ['(request-target)', 'host', 'date', 'digest'], get: ['(request-target)', 'host', 'date'] },
  misskey: { algorithm: 'rsa-sha256', post: ['(request-target)', 'date', 'host', 'digest'], get: ['(request-target)', 'date', 'host', 'accept'] },
  pleroma: { algorithm: 'rsa-sha256', post: ['(request-target)', 'content-length', 'date', 'digest', 'host'], get: ['(request-target)', 'date', 'host'] },
};

export const AS_TYPE = 'application/activity+json';
export const AS_ACCEPT = 'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

export function sha256Digest(body: Uint8Array): string {
  return `SHA-256=${createHash('sha256').update(body).digest('base64')}`;
}

function signingString(names: readonly string[], method: string, url: URL, headers: Record<string, string>): string | null {
  const lines: string[] = [];
  for (const name of names) {
    if (name === '(request-target)') lines.push(`(request-target): ${method.toLowerCase()} ${url.pathname}${url.search}`);
    else {
      const v = name === 'host' ? (headers.host ?? url.host) : headers[name];
      if (v === undefined) return null;
      lines.push(`${name}: ${v}`);
    }
  }
  return lines.join('\n');
}

/**
 * Adds `date`, `host` (and for a body `digest`, `content-type`, `content-length`) and the
 * `signature` header, in `style`'s manner; returns the headers (lower-case names).
 */
export async function signHeaders(
  style: SignatureStyle,
  key: { keyId: string; privateKey: KeyObject },
  method: 'GET' | 'POST',
  url: URL,
  now: Date,
  body: Uint8Array | null,
  digest?: string,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { host: url.host, date: now.toUTCString() };
  if (body) {
    headers['content-type'] = AS_TYPE;
    headers['content-length'] = String(body.byteLength);
    headers.digest = digest ?? sha256Digest(body);
  } else headers.accept = AS_ACCEPT;
  const names = method === 'POST' ? style.post : style.get;
  const text = signingString(names, method, url, headers)!;
  const signature = await new Promise<Buffer>((resolve, reject) =>
    cryptoSign('sha256', Buffer.from(text), key.privateKey, (err, sig) => (err ? reject(err) : resolve(sig))),
  );
  headers.signature = `keyId="${key.keyId}",algorithm="${style.algorithm}",headers="${names.join(' ')}",signature="${signature.toString('base64')}"`;
  return headers;
}

export interface ParsedSignature {
  keyId: string;
  algorithm: string | null;
  headers: string[];
  signature: Buffer;
}

export function parseSignatureHeader(value: string | undefined): ParsedSignature | null {
  if (!value) return null;
  const params = new Map<string, string>();
  for (const m of value.matchAll(/([a-zA-Z]+)="([^"]*)"/g)) params.set(m[1]!, m[2]!);
  const keyId = params.get('keyId');
  const signature = params.get('signature');
  if (!keyId || !signature) return null;
  return {
    keyId,
    algorithm: params.get('algorithm') ?? null,
    // The draft's default when `headers` is absent.
    headers: (params.get('headers') ?? 'date').toLowerCase().split(/\s+/).filter(Boolean),
    signature: Buffer.from(signature, 'base64'),
  };
}

/** Why a request's signature does not hold, or null when it does. */
export type SignatureProblem = 'unsigned' | 'headers' | 'digest' | 'date' | 'algorithm' | 'signature';

/**
 * Checks what can be checked without the key: a POST signs `(request-target)`, `date` (or
 * `(created)`, not sent by these four) and `digest`, and the digest is the body's.
 */
export function precheck(
  sig: ParsedSignature | null,
  req: { method: string; headers: Record<string, string>; body: Uint8Array | null },
  now: Date,
  window: { pastMs: number; futureMs: number } | null,
): SignatureProblem | null {
  if (!sig) return 'unsigned';
  if (sig.algorithm && !['rsa-sha256', 'hs2019'].includes(sig.algorithm.toLowerCase())) return 'algorithm';
  if (!sig.headers.includes('(request-target)') || !sig.headers.includes('date')) return 'headers';
  if (req.method === 'POST') {
    if (!sig.headers.includes('digest')) return 'headers';
    const digest = req.headers.digest;
    if (!digest || !req.body) return 'digest';
    // The header may list several digests (`SHA-256=…,SHA-512=…`); the SHA-256 one must match.
    const sha = digest.split(',').map((d) => d.trim()).find((d) => /^sha-256=/i.test(d));
    if (!sha || `SHA-256=${sha.slice(8)}` !== sha256Digest(req.body)) return 'digest';
  }
  if (window) {
    const sent = Date.parse(req.headers.date ?? '');
    if (!Number.isFinite(sent)) return 'date';
    const t = now.getTime();
    if (sent > t + window.futureMs || sent < t - window.pastMs) return 'date';
  }
  return null;
}

export async function verifyWithKey(sig: ParsedSignature, key: KeyObject, method: string, url: URL, headers: Record<string, string>): Promise<boolean> {
  const text = signingString(sig.headers, method, url, headers);
  if (text === null) return false;
  return new Promise<boolean>((resolve) =>
    cryptoVerify('sha256', Buffer.from(text), key, sig.signature, (err, ok) => resolve(!err && ok)),
  );
}
