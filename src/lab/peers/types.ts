import type { Software } from '../scenario-types.ts';

export type PeerSoftware = Exclude<Software, 'roost'>;

export const PEER_SOFTWARES: readonly PeerSoftware[] = ['mastodon', 'gotosocial', 'misskey', 'pleroma'];

export type Visibility = 'public' | 'unlisted' | 'private' | 'direct';

/** What a peer remembers of another server's actor: where to deliver. */
export interface RemoteActor {
  id: string;
  inbox: string;
  sharedInbox: string | null;
  followers: string | null;
  username: string | null;
}

export type Json = Record<string, unknown>;
