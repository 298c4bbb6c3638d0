/**
 * Fake peers for delivery tests and the delivery bench: plain node:http servers on loopback that
 * record every POST (path, activity type and id, arrival time, Signature header) and answer what
 * the test says. One handler can serve many servers (the bench runs 500 on as many ports).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkPost {
  /** host:port the request was sent to (its Host header). */
  host: string;
  path: string;
  type: string;
  activityId: string;
  /** Date.now() when the body was in. */
  at: number;
  signature: string | null;
}

export interface SinkAnswer {
  status: number;
  headers?: Record<string, string>;
  /** Milliseconds to wait before answering (a slow peer). */
  delayMs?: number;
}

export type SinkHandler = (post: SinkPost) => SinkAnswer;

export interface Sinks {
  /** Base URLs (http://127.0.0.1:PORT), one per server. */
  urls: string[];
  posts: SinkPost[];
  /** Replaces the answer of every server. */
  answer: SinkHandler;
  /** Called after each recorded POST. */
  onPost?: (post: SinkPost) => void;
  /** TCP connections accepted so far, all servers together. */
  connections: number;
  close(): Promise<void>;
}

const ACCEPTED: SinkHandler = () => ({ status: 202 });

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts `count` sink servers on 127.0.0.1 (OS-chosen ports). */
export async function startSinks(count = 1, opts: { record?: boolean } = {}): Promise<Sinks> {
  const record = opts.record ?? true;
  const sinks: Sinks = {
    urls: [],
    posts: [],
    answer: ACCEPTED,
    connections: 0,
    async close() {
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
  const servers: Server[] = [];
  const handle = async (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    const text = req.method === 'POST' ? await readBody(req) : '';
    let type = '';
    let activityId = '';
    try {
      const json = JSON.parse(text) as { type?: string; id?: string };
      type = json.type ?? '';
      activityId = json.id ?? '';
    } catch {
      /* not JSON */
    }
    const post: SinkPost = {
      host: req.headers.host ?? '',
      path: req.url ?? '',
      type,
      activityId,
      at: Date.now(),
      signature: (req.headers.signature as string | undefined) ?? null,
    };
    if (record) sinks.posts.push(post);
    const answer = sinks.answer(post);
    sinks.onPost?.(post);
    const send = () => {
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end();
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  };
  for (let i = 0; i < count; i++) {
    const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => void handle(req, res));
    server.maxConnections = 10_000;
    server.on('connection', () => sinks.connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    servers.push(server);
    sinks.urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return sinks;
}
