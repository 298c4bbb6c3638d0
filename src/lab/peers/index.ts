/** The lab's light peer profiles: see ./peer.ts. */
export { createPeer, type LabPeer, type PeerOptions } from './peer.ts';
export { PEER_SOFTWARES, type PeerSoftware } from './types.ts';
export { RETRY_POLICIES, type RetryPolicy } from './retry.ts';
export { SIGNATURE_STYLES, type SignatureStyle } from './signing.ts';
