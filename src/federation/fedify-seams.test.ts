/**
 * The Fedify seams (./fedify-seams.ts) against the Fedify installed: the version they were
 * written for, else a loud failure naming every seam to re-check; and the inbox message the fast
 * path writes by hand, field for field against the one Fedify's own inbox handler enqueues.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createFederation, MemoryKvStore, signRequest, type MessageQueue } from '@fedify/fedify';
import { Create, CryptographicKey, Note, Person } from '@fedify/vocab';
import { preloadedContexts, type DocumentLoader } from '@fedify/vocab-runtime';
import { FEDIFY_SEAMS, FEDIFY_VERSION, fedifyInboxMessage } from './fedify-seams.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const installed = (pkg: string): string => JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version;

describe('the Fedify seams', () => {
  it(`were written for the installed Fedify (${FEDIFY_VERSION})`, () => {
    const recheck = FEDIFY_SEAMS.map((s) => `  - ${s.seam} (${s.where}): ${s.recheck}`).join('\n');
    for (const pkg of ['@fedify/fedify', '@fedify/vocab']) {
      const version = installed(pkg);
      expect(
        version,
        `${pkg} is ${version}, but Roost's Fedify seams were written against ${FEDIFY_VERSION}. Re-check each one in the ` +
          `new sources, then set FEDIFY_VERSION in src/federation/fedify-seams.ts:\n${recheck}\n`,
      ).toBe(FEDIFY_VERSION);
    }
  });

  it('writes the inbox message Fedify’s own inbox handler enqueues, field for field', async () => {
    const origin = 'https://roost.example';
    const actorId = 'https://peer.example/users/p';
    const keyId = `${actorId}#main-key`;
    const keys = await webcrypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    );
    const actor = await new Person({
      id: new URL(actorId),
      inbox: new URL(`${actorId}/inbox`),
      publicKey: new CryptographicKey({ id: new URL(keyId), owner: new URL(actorId), publicKey: keys.publicKey }),
    }).toJsonLd();
    // The peer's documents from memory, the contexts from Fedify's preloaded copies: no network.
    const loader: DocumentLoader = async (url) => {
      const document = url in preloadedContexts ? preloadedContexts[url] : url.startsWith(actorId) ? actor : null;
      if (document == null) throw new Error(`not in this test: ${url}`);
      return { contextUrl: null, documentUrl: url, document };
    };
    const queued: unknown[] = [];
    const queue: MessageQueue = {
      enqueue: async (message) => void queued.push(message),
      listen: () => new Promise(() => undefined),
    };
    const federation = createFederation<void>({
      kv: new MemoryKvStore(),
      queue: { inbox: queue },
      manuallyStartQueue: true,
      documentLoaderFactory: () => loader,
      contextLoaderFactory: () => loader,
    });
    // (Fedify's inbox answers 404 without an actor dispatcher.)
    federation.setActorDispatcher('/users/{identifier}', () => null);
    federation.setInboxListeners('/users/{identifier}/inbox', '/inbox').on(Create, () => undefined);

    const activity = (await new Create({
      id: new URL(`${actorId}/activities/1`),
      actor: new URL(actorId),
      object: new Note({ id: new URL(`${actorId}/notes/1`), attribution: new URL(actorId), content: 'hi' }),
    }).toJsonLd({ format: 'compact' })) as Record<string, unknown>;
    const request = await signRequest(
      new Request(`${origin}/inbox`, { method: 'POST', headers: { 'content-type': 'application/activity+json' }, body: JSON.stringify(activity) }),
      keys.privateKey,
      new URL(keyId),
    );
    const response = await federation.fetch(request, { contextData: undefined });
    expect([response.status, await response.clone().text()]).toEqual([202, "Activity is enqueued."]);
    expect(queued).toHaveLength(1);

    const fedify = queued[0] as Record<string, unknown>;
    const ours = fedifyInboxMessage(origin, activity) as Record<string, unknown>;
    expect(Object.keys(ours).sort()).toEqual(Object.keys(fedify).sort());
    const { id: fedifyId, started: fedifyStarted, ...fedifyRest } = fedify;
    const { id: ourId, started: ourStarted, ...ourRest } = ours;
    expect(ourRest).toEqual(fedifyRest);
    expect([typeof ourId, typeof ourStarted]).toEqual([typeof fedifyId, typeof fedifyStarted]);
    expect(new Date(ourStarted as string).toISOString()).toBe(ourStarted);
  });
});
