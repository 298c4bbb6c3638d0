/**
 * How deeply a JSON text nests, found by a single scan of its characters (strings and escapes
 * respected), without parsing it: a cheap gate before JSON.parse and JSON-LD processing, whose
 * recursion a 10,000-level document would otherwise drive.
 */

/** True when the text opens more than `max` arrays/objects inside one another. */
export function jsonNestingExceeds(text: string, max: number): boolean {
  // Fewer openers than the limit cannot nest past it: counted natively (indexOf), an activity's
  // few braces cost next to nothing; only a document with many gets the scan below.
  let openers = 0;
  for (let i = text.indexOf('{'); i !== -1 && openers <= max; i = text.indexOf('{', i + 1)) openers++;
  for (let i = text.indexOf('['); i !== -1 && openers <= max; i = text.indexOf('[', i + 1)) openers++;
  if (openers <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

/** Nesting allowed in documents from peers (Mastodon's activities nest well under 20). */
export const MAX_JSON_DEPTH = 64;
