/**
 * A remote server on loopback acting as one fediverse software for the interoperability fixtures
 * (test/fixtures/activitypub/<software>/): it serves that software's actor documents (actor*.json,
 * at their ids, and at a key id that is a path of its own, as GoToSocial's `…/main-key`), its
 * JSON-LD context when it publishes one (Pleroma's litepub context), records what Roost POSTs to
 * its inboxes, and delivers fixtures to Roost signed with a real RSA key (draft-cavage, as all
 * five sign), under the key of the activity's actor. It answers WebFinger (`acct:user@host`) for
 * its actors by their preferredUsername, and records every resource asked.
 */
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateCryptoKeyPair, signRequest } from '@fedify/fedify';
import { exportSpki } from '@fedify/vocab-runtime';
import { fixtureDir, fixtureNames, fixtureText, loadFixture, type Placeholders, type Software } from '../fixtures/activitypub/load.ts';

export interface ReceivedPost {
  path: string;
  body: Record<string, unknown>;
}

export interface FakeSoftware {
  software: Software;
  base: string;
  /** The placeholders the remote side knows ({{remote}}, {{remote_hostname}}, {{public_key_pem}}). */
  values: Placeholders;
  /** Every GET the server answered, by path. */
  gets: string[];
  /** Every POST to an inbox. */
  posts: ReceivedPost[];
  /** Every WebFinger resource asked (`acct:user@host`), in order. */
  webfingers: string[];
  /** The fixture `name` (with `values` added to the server's own), as a parsed object. */
  fixture(name: string, values: Placeholders): Record<string, any>;
  /**
   * Serves the fixture `name` at its id's path from now on (a Note, an actor, a QuoteAuthorization
   * Roost will fetch); an actor with a key can then sign deliveries too.
   */
  serve(name: string, values: Placeholders): void;
  /** POSTs the fixture `name` to `inbox`, signed with its actor's key. */
  deliver(inbox: string, name: string, values: Placeholders): Promise<Response>;
  /** POSTs `text` (an activity, or a one-node array of one) to `inbox`, signed with its actor's key. */
  deliverText(inbox: string, text: string): Promise<Response>;
  close(): Promise<void>;
}

function idOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  const id = (v as { id?: unknown; '@id'?: unknown } | null)?.id ?? (v as { '@id'?: unknown } | null)?.['@id'];
  return typeof id === 'string' ? id : null;
}

/** The actor of an activity, compacted (`actor`) or expanded (`…#actor`, in a one-element array). */
function actorOf(activity: unknown): string | null {
  const top = (Array.isArray(activity) ? activity[0] : activity) as Record<string, unknown>;
  const actor = top.actor ?? top['https://www.w3.org/ns/activitystreams#actor'];
  return idOf(Array.isArray(actor) ? actor[0] : actor);
}

export async function startFakeSoftware(software: Software): Promise<FakeSoftware> {
  const keys = await generateCryptoKeyPair('RSASSA-PKCS1-v1_5');
  const pem = await exportSpki(keys.publicKey);
  const docs = new Map<string, string>(); // path → JSON text
  const keyIdOf = new Map<string, string>(); // actor id → key id
  const actorOfUsername = new Map<string, string>(); // preferredUsername (lower case) → actor id
  const fake = { software, gets: [] as string[], posts: [] as ReceivedPost[], webfingers: [] as string[] } as FakeSoftware;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', fake.base);
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          fake.posts.push({ path: url.pathname, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        } catch {
          /* not JSON: not recorded */
        }
        res.writeHead(202).end();
      });
      return;
    }
    fake.gets.push(url.pathname);
    if (url.pathname === '/.well-known/webfinger') {
      const resource = url.searchParams.get('resource') ?? '';
      fake.webfingers.push(resource);
      const m = /^acct:([^@]+)@(.+)$/.exec(resource);
      const actor = m && m[2]!.toLowerCase() === url.host.toLowerCase() ? actorOfUsername.get(m[1]!.toLowerCase()) : undefined;
      if (!actor) return void res.writeHead(404).end();
      const jrd = { subject: resource, links: [{ rel: 'self', type: 'application/activity+json', href: actor }] };
      return void res.writeHead(200, { 'content-type': 'application/jrd+json' }).end(JSON.stringify(jrd));
    }
    const doc = docs.get(url.pathname);
    if (!doc) return void res.writeHead(404).end();
    const type = url.pathname.endsWith('.jsonld') ? 'application/ld+json' : 'application/activity+json';
    res.writeHead(200, { 'content-type': type }).end(doc);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.values = { remote: fake.base, remote_hostname: '127.0.0.1', public_key_pem: pem };

  for (const name of fixtureNames(software).filter((n) => n.startsWith('actor'))) {
    const text = fixtureText(software, name, fake.values);
    const json = JSON.parse(text) as { id: string; preferredUsername?: string; publicKey?: { id: string } };
    docs.set(new URL(json.id).pathname, text);
    if (json.preferredUsername && !actorOfUsername.has(json.preferredUsername.toLowerCase())) actorOfUsername.set(json.preferredUsername.toLowerCase(), json.id);
    if (json.publicKey) {
      keyIdOf.set(json.id, json.publicKey.id);
      const keyUrl = new URL(json.publicKey.id);
      // A key id that is a document of its own (GoToSocial's …/main-key): the actor stub answers it.
      if (!keyUrl.hash && !docs.has(keyUrl.pathname)) docs.set(keyUrl.pathname, text);
    }
  }
  // A JSON-LD context the software publishes on its own server (Pleroma's litepub).
  const contextFile = path.join(fixtureDir(software), 'litepub-0.1.jsonld');
  if (existsSync(contextFile)) docs.set('/schemas/litepub-0.1.jsonld', readFileSync(contextFile, 'utf8'));

  fake.fixture = (name, values) => loadFixture(software, name, { ...fake.values, ...values });
  fake.serve = (name, values) => {
    const text = fixtureText(software, name, { ...fake.values, ...values });
    const json = JSON.parse(text) as { id: string; publicKey?: { id: string } };
    docs.set(new URL(json.id).pathname, text);
    if (json.publicKey) keyIdOf.set(json.id, json.publicKey.id);
  };
  fake.deliver = async (inbox, name, values) => fake.deliverText(inbox, fixtureText(software, name, { ...fake.values, ...values }));
  fake.deliverText = async (inbox, text) => {
    const actor = actorOf(JSON.parse(text));
    const keyId = actor ? keyIdOf.get(actor) : undefined;
    if (!keyId) throw new Error(`${software}: no served actor for ${actor}`);
    const request = new Request(inbox, { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body: text });
    return fetch(await signRequest(request, keys.privateKey, new URL(keyId), { spec: 'draft-cavage-http-signatures-12' }));
  };
  fake.close = () => new Promise<void>((r) => server.close(() => r()));
  return fake;
}
