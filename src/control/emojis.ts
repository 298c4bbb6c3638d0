/**
 * `roost emojis …`: the operator's custom emojis (add, list, disable, enable, remove, category),
 * run in the server process or the CLI's (see ./commands.ts). The image is read from a file path
 * the CLI made absolute; the same machine and user run both.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Services } from '../context.ts';
import { RoostError } from '../lib/errors.ts';
import { addCustomEmoji, EMOJI_MAX_BYTES, removeCustomEmoji, updateCustomEmoji } from '../services/custom-emojis.ts';
import { localEmojis } from '../services/reads/emojis.ts';
import { mediaStorage } from '../services/media-storage.ts';
import { serializeCustomEmoji } from '../serializers/custom-emoji.ts';

type Args = Record<string, unknown>;

function req(args: Args, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || v === '') throw new RoostError(422, `${key} is required`);
  return v;
}

export const EMOJI_COMMANDS = {
  async 'emojis.add'(services: Services, args: Args) {
    const file = req(args, 'file');
    if (!path.isAbsolute(file)) throw new RoostError(422, 'file must be an absolute path');
    const st = await stat(file).catch(() => null);
    if (!st?.isFile()) throw new RoostError(404, `No such file: ${file}`);
    if (st.size > EMOJI_MAX_BYTES) throw new RoostError(422, 'Validation failed: Image must be less than 256 KB');
    const data = await readFile(file);
    const shortcode = req(args, 'shortcode');
    await addCustomEmoji(services, {
      shortcode,
      data,
      category: typeof args.category === 'string' ? args.category : null,
      visibleInPicker: args.unlisted !== true,
    });
    return { shortcode };
  },
  async 'emojis.list'(services: Services, args: Args) {
    const category = typeof args.category === 'string' && args.category !== '' ? args.category : null;
    const rows = await localEmojis(services, category);
    if (category && rows.length === 0) {
      const [known] = await services.db.sql.query(`select 1 from custom_emoji_categories where lower(name) = lower($1)`, [category]);
      if (!known) throw new RoostError(404, `No emoji category ${category}`);
    }
    const base = mediaStorage(services).baseUrl;
    return {
      emojis: rows.map((e) => ({ ...serializeCustomEmoji(e, base), category: e.category, disabled: e.disabled })),
    };
  },
  async 'emojis.disable'(services: Services, args: Args) {
    await updateCustomEmoji(services, req(args, 'shortcode'), { disabled: true });
    return { shortcode: args.shortcode };
  },
  async 'emojis.enable'(services: Services, args: Args) {
    await updateCustomEmoji(services, req(args, 'shortcode'), { disabled: false });
    return { shortcode: args.shortcode };
  },
  async 'emojis.remove'(services: Services, args: Args) {
    await removeCustomEmoji(services, req(args, 'shortcode'));
    return { shortcode: args.shortcode };
  },
  async 'emojis.category'(services: Services, args: Args) {
    const category = args.none === true ? null : req(args, 'category');
    const change: { category: string | null; visibleInPicker?: boolean } = { category };
    if (typeof args.visibleInPicker === 'boolean') change.visibleInPicker = args.visibleInPicker;
    await updateCustomEmoji(services, req(args, 'shortcode'), change);
    return { shortcode: args.shortcode, category };
  },
};
