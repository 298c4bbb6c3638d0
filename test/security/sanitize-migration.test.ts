/**
 * Remote rows stored before sanitising on ingest: the migration runs them through the sanitiser.
 * A poisoned row is written straight into a real database, then the migration's up() runs on it
 * as the migrator runs it.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { Migration20261123010000_sanitize_remote_accounts } from '../../src/db/migrations/Migration20261123010000_sanitize_remote_accounts.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => {
  await roost?.close();
});

describe('the sanitise-remote-accounts migration', () => {
  it('cleans what was stored raw, and leaves local accounts alone', async () => {
    const sql = roost.services.db.sql;
    await sql.query(
      `insert into accounts (id, username, domain, uri, url, display_name, note, fields, avatar_url, header_url, created_at, updated_at)
       values (9001, 'old', 'old.example', 'https://old.example/users/old', 'javascript:alert(1)', $1, $2, $3::jsonb, 'data:image/png;base64,AA', 'https://old.example/h.png', now(), now())`,
      [
        `<b>Old</b>${'x'.repeat(2000)}`,
        '<p>bio<script>alert(1)</script><img src=x onerror=alert(1)></p>',
        JSON.stringify([{ name: '<i>site</i>', value: '<a href="javascript:alert(1)">x</a>', verified_at: null }]),
      ],
    );
    await sql.query(
      `insert into accounts (id, username, domain, uri, display_name, note, created_at, updated_at)
       values (9002, 'localone', null, 'http://local/users/localone', '<b>typed</b>', 'a <script> in a local bio is text', now(), now())`,
    );
    const migration = new Migration20261123010000_sanitize_remote_accounts(roost.services.db.orm.em.getDriver() as never, roost.services.db.orm.config);
    await migration.up();

    const [old] = await sql.query<any>(`select display_name, note, fields, url, avatar_url, header_url from accounts where id = 9001`);
    expect(old.display_name).toBe(`Old${'x'.repeat(97)}`);
    expect(old.note).toBe('<p>bio</p>');
    expect(old.fields).toEqual([{ name: 'site', value: '<span>x</span>', verified_at: null }]);
    expect(old.url).toBe('https://old.example/users/old');
    expect(old.avatar_url).toBeNull();
    expect(old.header_url).toBe('https://old.example/h.png');
    const [local] = await sql.query<any>(`select display_name, note from accounts where id = 9002`);
    expect(local).toEqual({ display_name: '<b>typed</b>', note: 'a <script> in a local bio is text' });
  });
});
