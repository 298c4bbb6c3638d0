/**
 * Named prepared statements on a PostgreSQL server, for the read side's hot statements.
 *
 * A statement text built with {@link prepared} ends with a marker comment. On a PostgreSQL server
 * every pooled `pg` client sends such a text as a named statement (`{ name, text, values }`): the
 * first use on a connection parses it (Parse), later uses send only its parameters (Bind/Execute),
 * and the server keeps its parse tree (and, once it judges a generic plan good enough, its plan)
 * instead of receiving, parsing and planning the whole text on every request. Other texts go as
 * before (the unnamed statement). On PGlite the marker is only a comment: the embedded database
 * runs in the process, there is no socket to spare.
 *
 * Texts are named in the order first seen, at most {@link MAX_NAMED} of them per process (beyond
 * that a marked text goes unnamed): marked texts must come from a bounded set (their variable
 * parts are parameters, or a few page shapes).
 */
import type pg from 'pg';

const MARK = '\n/* prepared */';
/** Distinct texts named per process, at most (each costs a little memory on every connection). */
export const MAX_NAMED = 256;

/** The statement text, marked to run as a named prepared statement on a PostgreSQL server. */
export function prepared(text: string): string {
  return text + MARK;
}

const PATCHED = Symbol('roost.prepared');

/**
 * Makes every client `pool` hands out send marked texts as named statements. Idempotent per
 * client; the names are shared by the pool's clients (each client prepares a name on first use).
 */
export function namePreparedStatements(pool: pg.Pool): void {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED) {
      name = `roost_${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  };
  pool.on('acquire', (client: pg.PoolClient) => {
    const c = client as pg.PoolClient & { [PATCHED]?: true };
    if (c[PATCHED]) return;
    c[PATCHED] = true;
    const query = c.query;
    c.query = function (this: pg.PoolClient, config: unknown, values?: unknown, callback?: unknown) {
      if (typeof config === 'string' && callback === undefined && typeof values !== 'function' && config.endsWith(MARK)) {
        const name = nameOf(config);
        if (name !== undefined) return (query as Function).call(this, { name, text: config, values: values ?? [] });
      }
      return (query as Function).call(this, config, values, callback);
    } as typeof c.query;
  });
}
