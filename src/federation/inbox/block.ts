import type { InboxContext } from '@fedify/fedify';
import type { Block } from '@fedify/vocab';
import type { Services } from '../../context.ts';
import { blockAccount } from '../../services/relationships.ts';
import { localAccountFromUri, resolveActivityActor } from './resolve.ts';

/** A remote account blocks a local one: recorded (blocked_by), and following ends both ways. */
export async function onBlock(services: Services, ctx: InboxContext<void>, block: Block): Promise<void> {
  const by = await resolveActivityActor(services, block);
  if (!by || by.domain === null) return;
  const target = await localAccountFromUri(services, ctx, block.objectId);
  if (!target) return;
  await blockAccount(services, by.id, target.id, { uri: block.id?.href });
}
