/**
 * `roost ip-blocks …` and `roost email-domains …`: the operator's twin of the admin API's IP
 * blocks and e-mail domain blocks, for emergencies (a sign-up wave from one range or provider),
 * on the same services (the audit log names no moderator: the operator at the CLI).
 */
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { normalizeDomain } from '../lib/domains.ts';
import { parseIpRange } from '../lib/ip-ranges.ts';
import { createIpBlock, removeIpBlock } from '../services/ip-blocks.ts';
import { createEmailDomainBlock, removeEmailDomainBlock } from '../services/email-blocks.ts';
import { emailDomainBlocksPage, ipBlocksPage, type IpBlockRow } from '../services/reads/sign-up-blocks.ts';
import { serializeAdminIpBlock } from '../serializers/admin-sign-up-blocks.ts';

type Args = Record<string, unknown>;

function req(args: Args, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new RoostError(422, `${key} is required`);
  return v;
}

const ALL = { maxId: null, sinceId: null, minId: null, limit: 100_000 };

const summary = (row: IpBlockRow) => serializeAdminIpBlock(row);

export const SIGN_UP_BLOCK_COMMANDS = {
  async 'ip-blocks.add'(services: Services, args: Args) {
    const expiresIn = args.expiresIn === undefined ? undefined : Number(args.expiresIn);
    const row = await createIpBlock(services, null, {
      ip: req(args, 'ip'),
      severity: req(args, 'severity'),
      comment: typeof args.comment === 'string' ? args.comment : undefined,
      expiresIn,
    });
    return { block: summary(row) };
  },
  async 'ip-blocks.remove'(services: Services, args: Args) {
    const range = parseIpRange(req(args, 'ip'));
    if (!range) throw new RoostError(422, 'Validation failed: Ip is invalid');
    const row = (await ipBlocksPage(services, ALL)).find((b) => b.ip === range.cidr);
    if (!row) throw new RoostError(404, `No IP block on ${range.cidr}`);
    await removeIpBlock(services, null, row.id);
    return { ip: row.ip };
  },
  async 'ip-blocks.list'(services: Services) {
    return { blocks: (await ipBlocksPage(services, ALL)).map(summary) };
  },
  async 'email-domains.block'(services: Services, args: Args) {
    const row = await createEmailDomainBlock(services, null, req(args, 'domain'));
    return { domain: row.domain };
  },
  async 'email-domains.unblock'(services: Services, args: Args) {
    const domain = normalizeDomain(req(args, 'domain'));
    const row = (await emailDomainBlocksPage(services, ALL)).find((b) => b.domain === domain);
    if (!row) throw new RoostError(404, `No e-mail domain block on ${domain ?? args.domain}`);
    await removeEmailDomainBlock(services, null, row.id);
    return { domain: row.domain };
  },
  async 'email-domains.list'(services: Services) {
    return { domains: (await emailDomainBlocksPage(services, ALL)).map((b) => b.domain) };
  },
};
