/**
 * Where an instance's outbound requests go when they do not go to the Internet: the federation
 * lab's virtual network (src/lab/network.ts). A Network takes one request (one hop: redirects are
 * the fetcher's) and answers it, or rejects as a failed connection would. Unset (the normal case),
 * the bounded fetcher and the delivery transport open guarded sockets.
 */
export interface WireRequest {
  method: string;
  url: URL;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Uint8Array | null;
}

export interface WireResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

export type Network = (req: WireRequest) => Promise<WireResponse>;
