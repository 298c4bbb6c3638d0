/**
 * NodeInfo 2.0 (http://nodeinfo.diaspora.software/ns/schema/2.0): the document crawlers and other
 * servers read to learn what software a server runs, whether it is open and how big it is, and
 * the /.well-known/nodeinfo discovery document that points to it.
 *
 * The 2.0 schema forbids additional properties everywhere except `metadata`, so the output is
 * built field by field; only `metadata` takes extra keys. Counts are clamped to non-negative
 * integers (the schema's `integer, minimum 0`) so a bad counter can never make the document
 * invalid. Pure: numbers come in, JSON goes out.
 */

export const NODEINFO_20_REL = 'http://nodeinfo.diaspora.software/ns/schema/2.0';
/** The canonical software name; must match ^[a-z0-9-]+$. */
export const NODEINFO_SOFTWARE_NAME = 'roost';

export interface NodeInfoInput {
  /** Roost's version, e.g. "0.1.0". */
  softwareVersion: string;
  /** Whether people can sign up (Mastodon reports true in approval mode too). */
  openRegistrations: boolean;
  users: {
    total: number;
    /** Signed in within the last 30 days. */
    activeMonth: number;
    /** Signed in within the last 180 days. */
    activeHalfyear: number;
  };
  /** Statuses posted by local users. */
  localPosts: number;
  /** Only when the server distinguishes comments from posts (Roost does not: leave it out). */
  localComments?: number;
  /** The server's title. */
  nodeName: string;
  /** The server's short description. */
  nodeDescription: string;
  /** Further free-form metadata; `nodeName` and `nodeDescription` above take precedence. */
  metadata?: Readonly<Record<string, unknown>>;
}

export interface NodeInfo20 {
  version: '2.0';
  software: { name: string; version: string };
  protocols: ['activitypub'];
  services: { inbound: []; outbound: [] };
  openRegistrations: boolean;
  usage: {
    users: { total: number; activeHalfyear: number; activeMonth: number };
    localPosts: number;
    localComments?: number;
  };
  metadata: { nodeName: string; nodeDescription: string; [key: string]: unknown };
}

function count(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

export function serializeNodeInfo20(input: NodeInfoInput): NodeInfo20 {
  const usage: NodeInfo20['usage'] = {
    users: {
      total: count(input.users.total),
      activeHalfyear: count(input.users.activeHalfyear),
      activeMonth: count(input.users.activeMonth),
    },
    localPosts: count(input.localPosts),
  };
  if (input.localComments !== undefined) usage.localComments = count(input.localComments);

  const { nodeName: _name, nodeDescription: _description, ...extra } = input.metadata ?? {};
  return {
    version: '2.0',
    software: { name: NODEINFO_SOFTWARE_NAME, version: input.softwareVersion },
    protocols: ['activitypub'],
    services: { inbound: [], outbound: [] },
    openRegistrations: input.openRegistrations,
    usage,
    metadata: { nodeName: input.nodeName, nodeDescription: input.nodeDescription, ...extra },
  };
}

export interface NodeInfoLink {
  rel: string;
  href: string;
}

/** The NodeInfo 2.0 entry of /.well-known/nodeinfo. */
export function nodeInfo20Link(baseUrl: string): NodeInfoLink {
  return { rel: NODEINFO_20_REL, href: `${baseUrl.replace(/\/+$/, '')}/nodeinfo/2.0` };
}

/** The /.well-known/nodeinfo document with the 2.0 link only. */
export function serializeNodeInfoLinks(baseUrl: string): { links: NodeInfoLink[] } {
  return { links: [nodeInfo20Link(baseUrl)] };
}
