/**
 * What the federation lab watches inside an instance (services.observe): an activity queued for
 * delivery, an inbound activity applied. Unset outside the lab; calls cost nothing then.
 */
export type Observation =
  | { kind: 'queued'; id: string; type: string; inboxes: number | 'followers' }
  | { kind: 'applied'; id: string | null; type: string; ok: boolean; error?: string };

export type Observer = (observation: Observation) => void;
