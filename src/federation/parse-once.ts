/**
 * One JSON-LD parse of an incoming activity instead of two. Fedify's inbox handler parses the
 * activity (Activity.fromJsonLd: a JSON-LD expansion of the whole document, the Note included)
 * once to look for Object Integrity Proofs (verifyObject), and, when there are none, checks the
 * HTTP signature and parses the very same object again with the same loaders. Here the first
 * parse of an object is kept (keyed by the object itself, in a WeakMap) and handed to the next
 * parse of that same object, once: the second call gets the first one's result, and a third call
 * parses afresh. What is parsed, and every check Fedify makes on it, is unchanged.
 *
 * Installed once per process (createRoostFederation calls it); Activity.fromJsonLd on subclasses
 * (Create.fromJsonLd…) and with a different object is untouched.
 */
import { Activity } from '@fedify/vocab';

const INSTALLED = Symbol.for('roost.activityParseOnce');
const kept = new WeakMap<object, Promise<Activity>>();

export function parseActivitiesOnce(): void {
  const cls = Activity as unknown as Record<symbol, unknown>;
  if (cls[INSTALLED]) return;
  cls[INSTALLED] = true;
  const original = Activity.fromJsonLd;
  Activity.fromJsonLd = function (this: typeof Activity, json: unknown, options?: Parameters<typeof original>[1]) {
    if (this !== Activity || json === null || typeof json !== 'object') return original.call(this, json, options);
    const earlier = kept.get(json);
    if (earlier) {
      kept.delete(json);
      return earlier;
    }
    const parsed = original.call(this, json, options);
    kept.set(json, parsed);
    parsed.catch(() => kept.delete(json));
    return parsed;
  } as typeof original;
}
