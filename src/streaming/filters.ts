/**
 * THE per-subscriber filter hook of the streaming API (one place): called once per subscribed
 * account for every `update` / `status.update` event, with the status rendered once (public
 * rendering, no viewer flags). `hidden` drops the event for that subscriber; a non-empty
 * `filtered` is set as the status's `filtered` array in that subscriber's payload (warn).
 *
 * Wiring the filter engine (another part of issue 12) is a change of this function only:
 *   const set = await loadActiveFilters(services, accountId);
 *   return applyFilters(set, filterableFromStatusJson(status), context);
 */
import type { Services } from '../context.ts';

export interface StreamFilterVerdict {
  hidden: boolean;
  filtered?: unknown[];
}

export type StreamFilterContext = 'home' | 'public' | 'notifications' | 'thread';

const PASS: StreamFilterVerdict = { hidden: false };

export async function filterForSubscriber(
  services: Services,
  accountId: string,
  status: Record<string, unknown>,
  context: StreamFilterContext,
): Promise<StreamFilterVerdict> {
  void services;
  void accountId;
  void status;
  void context;
  return PASS;
}
