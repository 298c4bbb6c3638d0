// Router: method + path pattern → handler, precompiled into a segment trie (plus a Map for fully
// static paths, the common case). Patterns:
//   '/api/v1/instance'                 static
//   '/api/v1/accounts/:id/follow'      `:name` captures one whole segment (URL-decoded)
//   '/@:username'                      a literal prefix before `:name` in a segment
//   '/system/*' or '/system/*path'     trailing wildcard: the rest of the path (≥ 1 char), as
//                                      params['*'] or params.path
// Precedence at each segment: static, then prefixed param, then param, then wildcard (with
// backtracking, so a static route never hides a param route registered for another method).
// A trailing slash on the request path is ignored, as in Rails.

import type { RequestContext } from './context.ts';

export type Handler = (ctx: RequestContext) => Promise<Response> | Response;

/**
 * Runs before the request body is accepted (the server pauses the upload meanwhile): a throw
 * answers at once (401, 429…) and closes the connection without reading the body.
 */
export type BeforeBody = (ctx: RequestContext) => Promise<void> | void;

export interface RouteOptions {
  /** Largest body this route accepts (413 beyond); default: the server's maxBodyBytes (1 MiB). */
  maxBodyBytes?: number;
  /** Checks that must pass before the body is read (e.g. the bearer token). */
  beforeBody?: BeforeBody;
}

export type RouteMatch = {
  handler: Handler;
  params: Record<string, string>;
  pattern: string;
  /** The route's largest body, when it declared one. */
  maxBodyBytes?: number;
  /** The router-wide hooks (router.beforeBody), then the route's own; empty for most. */
  hooks: readonly BeforeBody[];
};
export type MethodNotAllowed = { allowed: string[] };

interface Route {
  handler: Handler;
  names: string[];
  pattern: string;
  options: RouteOptions | undefined;
}

const NO_HOOKS: readonly BeforeBody[] = Object.freeze([]);

type MethodMap = Map<string, Route>;

class Node {
  statics: Map<string, Node> | null = null;
  prefixed: Array<{ prefix: string; node: Node }> | null = null;
  param: Node | null = null;
  wildcard: MethodMap | null = null;
  routes: MethodMap | null = null;
}

const EMPTY_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function decodeParam(s: string): string {
  if (s.indexOf('%') === -1) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function normalizePath(path: string): string {
  return path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */ ? path.slice(0, -1) : path;
}

export class Router {
  #root = new Node();
  #static = new Map<string, MethodMap>();
  #list: Array<{ method: string; pattern: string }> = [];
  #hooks: BeforeBody[] = [];

  get(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('GET', pattern, handler, opts); }
  post(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('POST', pattern, handler, opts); }
  put(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('PUT', pattern, handler, opts); }
  patch(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('PATCH', pattern, handler, opts); }
  delete(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('DELETE', pattern, handler, opts); }
  head(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('HEAD', pattern, handler, opts); }
  options(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('OPTIONS', pattern, handler, opts); }
  /** PUT and PATCH both (Mastodon accepts either for updates). */
  update(pattern: string, handler: Handler, opts?: RouteOptions): this { return this.add('PUT', pattern, handler, opts).add('PATCH', pattern, handler, opts); }

  /** A hook run for every matched route before its body is read (rate limits), in registration order. */
  beforeBody(hook: BeforeBody): this {
    this.#hooks.push(hook);
    return this;
  }

  /** Register a handler; a second registration of the same method + pattern throws. */
  add(method: string, pattern: string, handler: Handler, opts?: RouteOptions): this {
    method = method.toUpperCase();
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${pattern}`);
    const norm = normalizePath(pattern);
    const segs = norm.split('/').slice(1);
    const names: string[] = [];
    let node = this.#root;
    let dynamic = false;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i];
      if (seg.startsWith('*')) {
        if (i !== segs.length - 1) throw new Error(`wildcard must be the last segment: ${pattern}`);
        names.push(seg.length > 1 ? seg.slice(1) : '*');
        node.wildcard ??= new Map();
        this.#insert(node.wildcard, method, { handler, names, pattern, options: opts });
        return this;
      }
      const colon = seg.indexOf(':');
      if (colon === 0) {
        dynamic = true;
        names.push(seg.slice(1));
        node = node.param ??= new Node();
      } else if (colon > 0) {
        dynamic = true;
        const prefix = seg.slice(0, colon);
        names.push(seg.slice(colon + 1));
        node.prefixed ??= [];
        let entry = node.prefixed.find((p) => p.prefix === prefix);
        if (!entry) {
          entry = { prefix, node: new Node() };
          node.prefixed.push(entry);
          node.prefixed.sort((a, b) => b.prefix.length - a.prefix.length);
        }
        node = entry.node;
      } else {
        node.statics ??= new Map();
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = new Node()));
        node = next;
      }
    }
    node.routes ??= new Map();
    const route: Route = { handler, names, pattern, options: opts };
    this.#insert(node.routes, method, route);
    if (!dynamic) {
      let m = this.#static.get(norm);
      if (!m) this.#static.set(norm, (m = new Map()));
      m.set(method, route);
    }
    return this;
  }

  #insert(map: MethodMap, method: string, route: Route): void {
    if (map.has(method)) throw new Error(`duplicate route ${method} ${route.pattern}`);
    map.set(method, route);
    this.#list.push({ method, pattern: route.pattern });
  }

  /** Every registered method + pattern, in registration order. */
  routes(): Array<{ method: string; pattern: string }> {
    return this.#list.slice();
  }

  /**
   * Find the handler for a method and a raw (still %-encoded) path without query string.
   * HEAD falls back to GET. Returns the match, `{ allowed }` when the path exists for other
   * methods only (→ 405), or null when no route has this path.
   */
  match(method: string, path: string): RouteMatch | MethodNotAllowed | null {
    const norm = normalizePath(path);
    const st = this.#static.get(norm);
    if (st !== undefined) {
      const r = st.get(method) ?? (method === 'HEAD' ? st.get('GET') : undefined);
      if (r !== undefined) return this.#matched(r, EMPTY_PARAMS);
    }
    const segs = norm.split('/');
    const values: string[] = [];
    const allowed = new Set<string>();
    const r = search(this.#root, segs, 1, method, values, allowed);
    if (r !== null) {
      let params = EMPTY_PARAMS;
      if (r.names.length) {
        params = {};
        for (let i = 0; i < r.names.length; i++) params[r.names[i]] = decodeParam(values[i]);
      }
      return this.#matched(r, params);
    }
    if (allowed.size === 0) return null;
    if (allowed.has('GET')) allowed.add('HEAD');
    return { allowed: [...allowed] };
  }

  #matched(r: Route, params: Record<string, string>): RouteMatch {
    const o = r.options;
    let hooks: readonly BeforeBody[] = this.#hooks.length > 0 ? this.#hooks : NO_HOOKS;
    if (o?.beforeBody !== undefined) hooks = [...hooks, o.beforeBody];
    return { handler: r.handler, params, pattern: r.pattern, maxBodyBytes: o?.maxBodyBytes, hooks };
  }
}

function pick(map: MethodMap, method: string, allowed: Set<string>): Route | null {
  const r = map.get(method) ?? (method === 'HEAD' ? map.get('GET') : undefined);
  if (r !== undefined) return r;
  for (const m of map.keys()) allowed.add(m);
  return null;
}

function search(node: Node, segs: string[], i: number, method: string, values: string[], allowed: Set<string>): Route | null {
  if (i === segs.length) return node.routes !== null ? pick(node.routes, method, allowed) : null;
  const seg = segs[i];
  if (node.statics !== null) {
    const child = node.statics.get(seg);
    if (child !== undefined) {
      const r = search(child, segs, i + 1, method, values, allowed);
      if (r !== null) return r;
    }
  }
  if (node.prefixed !== null) {
    for (const { prefix, node: child } of node.prefixed) {
      if (seg.length > prefix.length && seg.startsWith(prefix)) {
        values.push(seg.slice(prefix.length));
        const r = search(child, segs, i + 1, method, values, allowed);
        if (r !== null) return r;
        values.pop();
      }
    }
  }
  if (node.param !== null && seg !== '') {
    values.push(seg);
    const r = search(node.param, segs, i + 1, method, values, allowed);
    if (r !== null) return r;
    values.pop();
  }
  if (node.wildcard !== null) {
    const rest = i === segs.length - 1 ? seg : segs.slice(i).join('/');
    if (rest !== '') {
      const r = pick(node.wildcard, method, allowed);
      if (r !== null) {
        values.push(rest);
        return r;
      }
    }
  }
  return null;
}

export function isMethodNotAllowed(m: RouteMatch | MethodNotAllowed | null): m is MethodNotAllowed {
  return m !== null && 'allowed' in m;
}
