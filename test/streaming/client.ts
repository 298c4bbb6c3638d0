/** Test clients of the streaming API: a WebSocket that collects frames, and an SSE reader over fetch. */
import type { TestRoost } from '../helpers/roost.ts';

export interface Frame {
  stream?: string[];
  event?: string;
  payload?: string;
  id?: string;
  error?: string;
  status?: number;
}

export class WsClient {
  readonly ws: WebSocket;
  readonly frames: Frame[] = [];
  closed = false;
  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener('message', (e) => this.frames.push(JSON.parse(String(e.data)) as Frame));
    ws.addEventListener('close', () => (this.closed = true));
  }
  static async open(roost: TestRoost, query: string, init: { protocols?: string[]; headers?: Record<string, string> } = {}): Promise<WsClient> {
    const url = roost.at(`/api/v1/streaming${query}`).replace(/^http/, 'ws');
    const ws = new WebSocket(url, { protocols: init.protocols, headers: init.headers } as unknown as string[]);
    const c = new WsClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error('websocket failed to open')));
    });
    return c;
  }
  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }
  /** Waits until `n` frames matching `pred` arrived (and returns them). */
  async waitFor(pred: (f: Frame) => boolean, n = 1, timeoutMs = 10_000): Promise<Frame[]> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const got = this.frames.filter(pred);
      if (got.length >= n) return got;
      if (performance.now() > until) throw new Error(`timed out waiting for ${n} frame(s); got ${JSON.stringify(this.frames).slice(0, 800)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  close(): void {
    this.ws.close();
  }
}

export class SseClient {
  readonly events: { id?: string; event?: string; data?: string }[] = [];
  text = '';
  readonly abort = new AbortController();
  status = 0;
  static async open(roost: TestRoost, path: string, token: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    const res = await fetch(roost.at(path), { headers: { authorization: `Bearer ${token}`, ...headers }, signal: c.abort.signal });
    c.status = res.status;
    if (res.status !== 200) {
      c.text = await res.text();
      return c;
    }
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          c.text += decoder.decode(chunk, { stream: true });
          const blocks = c.text.split('\n\n');
          c.text = blocks.pop()!;
          for (const b of blocks) {
            const ev: { id?: string; event?: string; data?: string } = {};
            for (const line of b.split('\n')) {
              const m = /^(id|event|data): ?(.*)$/.exec(line);
              if (m) ev[m[1] as 'id'] = m[2];
            }
            if (ev.event) c.events.push(ev);
          }
        }
      } catch {
        // aborted
      }
    })();
    return c;
  }
  async waitFor(pred: (e: { event?: string; data?: string }) => boolean, n = 1, timeoutMs = 10_000) {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const got = this.events.filter(pred);
      if (got.length >= n) return got;
      if (performance.now() > until) throw new Error(`timed out; got ${JSON.stringify(this.events).slice(0, 500)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  close(): void {
    this.abort.abort();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
