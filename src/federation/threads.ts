/**
 * The walk behind a thread's async refresh (services/threads.ts, job THREAD_FETCH_JOB): what the
 * servers of a thread hold and this one does not is fetched and stored through the remote status
 * path (./remote-statuses.ts persistFetchedStatus → services/remote-statuses.ts).
 *
 * From the root down, breadth first: a remote status is fetched afresh from its server (signed by
 * the instance actor, so servers in authorized-fetch mode answer; bounded by the one fetcher), its
 * `replies` collection is read page by page (the first page is usually embedded), and each reply
 * not known here is fetched and stored, then walked in turn; a local status's replies are the
 * ones known here. The root's FEP-7888 `context`, when its server serves it as a collection, is
 * read too: every status it names is fetched the same way (its parents found through
 * inReplyTo). What each server reports of a status's replies (totalItems, or the items listed)
 * goes in status_reply_reports for the thread's completeness.
 *
 * Bounded: `federation.threadFetchMaxStatuses` statuses brought in, `threadFetchMaxPages`
 * collection pages, `threadFetchMaxDepth` levels, `threadFetchTimeoutSeconds` in all, and
 * `threadFetchHostRate` requests a second to one host (shared by the walks of this process).
 * Loops are cut (a status or page is read once per walk), a collection and its pages must be on
 * its status's host, and a host that fails once (no answer, 5xx, a timeout) is not asked again in
 * the walk and is named as unreachable.
 */
import type { Context } from '@fedify/fedify';
import { Object as AsObject } from '@fedify/vocab';
import type { DocumentLoader } from '@fedify/vocab-runtime';
import type { Services } from '../context.ts';
import { statusByUri } from '../services/remote-statuses.ts';
import { beginThreadFetch, countThreadResults, finishThreadRefresh, recordReplyReport, type ThreadFetchJob } from '../services/threads.ts';
import { newFetchBudget, persistFetchedStatus } from './remote-statuses.ts';
import { freshDocumentLoader } from './lookup.ts';
import type { RoostFederation } from './index.ts';

/** Statuses walked or brought at once (their hosts' rates bound them further). */
const CONCURRENCY = 4;
/** Tasks waiting in a walk, per status it may bring. */
const QUEUE_PER_STATUS = 4;

/** A unit of the walk: a status whose replies to read, or a listed status to bring in. */
type Task = { walk: Node } | { bring: string; depth: number };

interface Node {
  id: string;
  uri: string;
  local: boolean;
  depth: number;
  /** What the walk needs of the status's document (its `replies`, `context`) when it fetched it already. */
  doc?: Record<string, unknown>;
}

/** A walked status's collections, kept while it waits in the queue if they are small (else it is fetched again). */
const KEPT_BYTES = 64 * 1024;
function kept(document: Record<string, unknown>): Record<string, unknown> | undefined {
  const doc = { replies: document.replies, context: document.context };
  return JSON.stringify(doc).length <= KEPT_BYTES ? doc : undefined;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
function idOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.id === 'string') return v.id;
  return null;
}
function httpUrl(v: string | null): URL | null {
  if (!v || !URL.canParse(v)) return null;
  const u = new URL(v);
  return u.protocol === 'https:' || u.protocol === 'http:' ? u : null;
}

/** The next moment each host may be asked, per instance (a walk waits for its turn). */
const hostSlots = new WeakMap<Services, Map<string, number>>();

/** Runs the walk of `job` for the refresh running on its thread, then marks that refresh finished whatever happened. */
export async function fetchThread(services: Services, federation: RoostFederation, job: ThreadFetchJob): Promise<void> {
  const refreshId = await beginThreadFetch(services, job.rootId);
  if (!refreshId) return;
  const walk = new ThreadWalk(services, federation, job.rootId, refreshId);
  try {
    await walk.run();
  } catch (e) {
    services.log.warn({ err: e, rootId: job.rootId }, 'thread fetch failed');
  } finally {
    walk.close();
    await finishThreadRefresh(services, refreshId, [...walk.unreachable]);
  }
}

class ThreadWalk {
  readonly unreachable = new Set<string>();
  readonly #services: Services;
  readonly #federation: RoostFederation;
  readonly #rootId: string;
  readonly #refreshId: string;
  readonly #abort = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #seen = new Set<string>();
  readonly #pagesSeen = new Set<string>();
  readonly #queue: Task[] = [];
  readonly #ownOrigin: string;
  #ctx!: Context<void>;
  #loader!: DocumentLoader;
  #brought = 0;
  #pages = 0;
  #full = false;

  constructor(services: Services, federation: RoostFederation, rootId: string, refreshId: string) {
    this.#services = services;
    this.#federation = federation;
    this.#rootId = rootId;
    this.#refreshId = refreshId;
    this.#ownOrigin = new URL(services.config.publicUrl).origin;
    this.#timer = setTimeout(() => this.#abort.abort(new Error('thread fetch deadline')), services.config.federation.threadFetchTimeoutSeconds * 1000);
  }

  get #limits() {
    return this.#services.config.federation;
  }

  get #over(): boolean {
    return this.#abort.signal.aborted;
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#abort.abort();
  }

  async run(): Promise<void> {
    const [root] = await this.#services.db.sql.query<{ id: string; uri: string; local: boolean }>(
      `select id::text, uri, local from statuses where id = $1 and deleted_at is null`,
      [this.#rootId],
    );
    if (!root) return;
    this.#ctx = this.#federation.createContext(new URL(this.#services.config.publicUrl), undefined);
    this.#loader = await freshDocumentLoader(this.#ctx);
    this.#seen.add(root.uri);
    this.#queue.push({ walk: { id: root.id, uri: root.uri, local: root.local, depth: 0 } });
    // Over at the deadline even with statuses in flight (they finish on their own, bounded by the fetcher).
    await new Promise<void>((resolve) => {
      this.#abort.signal.addEventListener('abort', () => resolve(), { once: true });
      let active = 0;
      const pump = () => {
        while (active < CONCURRENCY && this.#queue.length > 0 && !this.#over) {
          const task = this.#queue.shift()!;
          active++;
          this.#run(task)
            .catch((e) => this.#services.log.debug({ err: e, task }, 'thread fetch: a status failed'))
            .finally(() => {
              active--;
              pump();
            });
        }
        if (active === 0) resolve();
      };
      pump();
    });
  }

  async #run(task: Task): Promise<void> {
    if ('walk' in task) return this.#visit(task.walk);
    if (this.#full) return;
    const child = await this.#bring(task.bring, task.depth);
    if (child) this.#queue.push({ walk: child });
  }

  /** A status's replies: listed by its server (remote) and known here, each queued to be brought in and walked. */
  async #visit(node: Node): Promise<void> {
    const listed: string[] = [];
    if (!node.local) {
      const doc = node.doc ?? (await this.#loadJson(new URL(node.uri)))?.document;
      if (doc) {
        const replies = await this.#readCollection(doc.replies, new URL(node.uri));
        if (replies) {
          listed.push(...replies.items);
          const reported = replies.total ?? (replies.complete ? replies.items.length : null);
          if (reported !== null) await recordReplyReport(this.#services, node.id, Math.max(reported, 0));
        }
        // The root's thread as its server sees it (FEP-7888), when it serves one.
        if (node.depth === 0) {
          const context = await this.#readCollection(typeof doc.context === 'string' ? doc.context : null, new URL(node.uri));
          if (context) listed.push(...context.items);
        }
      }
    }
    // The replies known here (local ones, and remote ones the server did not list).
    const known = await this.#services.db.sql.query<{ id: string; uri: string; local: boolean }>(
      `select id::text, uri, local from statuses where in_reply_to_id = $1 and deleted_at is null and visibility in ('public', 'unlisted')
        order by id limit ${this.#limits.threadFetchMaxStatuses + 1}`,
      [node.id],
    );
    if (node.depth + 1 > this.#limits.threadFetchMaxDepth) return;
    for (const k of known) {
      if (this.#seen.has(k.uri)) continue;
      this.#seen.add(k.uri);
      this.#queue.push({ walk: { id: k.id, uri: k.uri, local: k.local, depth: node.depth + 1 } });
    }
    // A hostile server may list far more than the walk will bring: the queue is bounded too.
    const room = QUEUE_PER_STATUS * (this.#limits.threadFetchMaxStatuses + 1);
    for (const uri of new Set(listed)) {
      if (this.#queue.length >= room) break;
      if (!this.#seen.has(uri)) this.#queue.push({ bring: uri, depth: node.depth + 1 });
    }
  }

  /** The status at `uri`: known here, or fetched and stored (counted against the bounds); null when not to walk. */
  async #bring(uri: string, depth: number): Promise<Node | null> {
    if (this.#seen.has(uri)) return null;
    this.#seen.add(uri);
    const url = httpUrl(uri);
    if (!url) return null;
    const known = await statusByUri(this.#services, url.href);
    if (known) return known.deleted || known.reblogOfId ? null : { id: known.id, uri: url.href, local: known.local, depth };
    if (url.origin === this.#ownOrigin) return null;
    if (this.#brought >= this.#limits.threadFetchMaxStatuses) {
      this.#full = true;
      return null;
    }
    const loaded = await this.#loadJson(url);
    if (!loaded || this.#over) return null;
    let object: AsObject;
    try {
      object = await AsObject.fromJsonLd(loaded.document, {
        documentLoader: this.#loader,
        contextLoader: this.#ctx.contextLoader,
        baseUrl: new URL(loaded.documentUrl),
      });
    } catch {
      return null;
    }
    if (!object.id || object.id.origin !== new URL(loaded.documentUrl).origin) return null;
    // Counted before it is stored: a status that cannot be stored still spent the budget.
    this.#brought++;
    const id = await persistFetchedStatus(this.#services, this.#ctx, url, object, { depth: 0, budget: newFetchBudget() });
    if (!id) return null;
    await countThreadResults(this.#services, this.#refreshId, 1);
    return { id, uri: url.href, local: false, depth, doc: kept(loaded.document) };
  }

  /**
   * A collection's items (ids), its totalItems, and whether every page was read: `ref` is the
   * collection (embedded, or its id) of a status at `owner`; it and its pages must be on that host.
   */
  async #readCollection(ref: unknown, owner: URL): Promise<{ items: string[]; total: number | null; complete: boolean } | null> {
    let collection: unknown = ref;
    if (typeof ref === 'string') {
      const url = httpUrl(ref);
      if (!url || url.host !== owner.host || this.#pagesSeen.has(url.href)) return null;
      this.#pagesSeen.add(url.href);
      collection = (await this.#loadJson(url))?.document;
    }
    if (!isObject(collection)) return null;
    const types = asArray(collection.type);
    if (!types.some((t) => typeof t === 'string' && /^(Ordered)?Collection(Page)?$/.test(t))) return null;
    const items: string[] = [];
    const take = (page: Json) => {
      for (const item of [...asArray(page.orderedItems), ...asArray(page.items)]) {
        const id = idOf(item);
        if (id) items.push(id);
      }
    };
    const total = typeof collection.totalItems === 'number' && Number.isSafeInteger(collection.totalItems) ? collection.totalItems : null;
    take(collection);
    let next: unknown = collection.first ?? collection.next ?? null;
    while (next !== null && next !== undefined) {
      if (this.#over || this.#pages >= this.#limits.threadFetchMaxPages || items.length > this.#limits.threadFetchMaxStatuses) break;
      let page: unknown = next;
      if (!isObject(next)) {
        const url = httpUrl(idOf(next));
        if (!url || url.host !== owner.host || this.#pagesSeen.has(url.href)) {
          next = null;
          break;
        }
        this.#pagesSeen.add(url.href);
        this.#pages++;
        page = (await this.#loadJson(url))?.document;
      }
      if (!isObject(page)) break;
      take(page);
      next = page.next ?? null;
      // An embedded page that names itself as its next: read once.
      const pageId = idOf(page);
      if (pageId) this.#pagesSeen.add(pageId);
    }
    return { items: [...new Set(items)], total, complete: next === null || next === undefined };
  }

  /** A document, fetched within the walk's deadline and its host's rate; null (the host noted) when it cannot be had. */
  async #loadJson(url: URL): Promise<{ document: Json; documentUrl: string } | null> {
    if (this.#over || this.unreachable.has(url.host)) return null;
    if (!(await this.#turn(url.host))) return null;
    try {
      const doc = await this.#loader(url.href, { signal: this.#abort.signal });
      return isObject(doc.document) ? { document: doc.document, documentUrl: doc.documentUrl } : null;
    } catch (e) {
      if (this.#over) return null;
      const message = e instanceof Error ? e.message : String(e);
      // Gone or refused (4xx but 429, or a server the domain policy refuses): the host is there.
      if (!/HTTP 4(?!29)\d\d|domain policy refuses/.test(message)) this.unreachable.add(url.host);
      return null;
    }
  }

  /** Waits for the host's next slot (`threadFetchHostRate` a second); false when the deadline comes first. */
  async #turn(host: string): Promise<boolean> {
    let slots = hostSlots.get(this.#services);
    if (!slots) hostSlots.set(this.#services, (slots = new Map()));
    const now = Date.now();
    const at = Math.max(now, slots.get(host) ?? 0);
    slots.set(host, at + 1000 / this.#limits.threadFetchHostRate);
    if (slots.size > 10_000) for (const [h, t] of slots) if (t < now) slots.delete(h);
    if (at <= now) return true;
    return new Promise<boolean>((resolve) => {
      const signal = this.#abort.signal;
      const done = (ok: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(true), at - now);
      signal.addEventListener('abort', onAbort);
    });
  }
}
