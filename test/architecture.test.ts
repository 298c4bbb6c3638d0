/**
 * Guard rails on the dependency direction (DESIGN.md "Dependency direction"), read from the
 * source's import statements:
 *
 *   - a route (src/api) neither imports the database layer's values (src/db: the ORM, plain SQL,
 *     entity schemas; `import type` of an entity is fine) nor reaches the database through
 *     `services.db`: routes call services and read modules;
 *   - a machine (actors/, tests aside) imports xstate and files under actors/ only;
 *   - a service (src/services) does not import the job queue (src/jobs): it schedules through
 *     events/timers.ts and writes events through the actor store, the one service that imports
 *     the outbox writer (events/outbox.ts; its types are free to all);
 *   - effects (src/effects) do not import services: timers come back through services/timers.ts;
 *   - the event spine (src/events) imports nothing above it: only itself, the database layer, the
 *     job queue, small libraries and the actors' types (services, effects, federation, streaming,
 *     push, views, serializers, api and http are above it);
 *   - views (src/views) are the only renderers of statuses, their polls and versions,
 *     notifications and conversations: no other file (serializers and tests aside) imports
 *     serializeStatus, serializeStatusEdit, serializePoll, serializeNotification,
 *     serializeNotificationGroup or serializeConversation; routes, streaming and the effects
 *     (the notifications consumer, whose rendering streaming and Web Push get) call views;
 *   - views read through read modules (src/services/reads, and media-storage for file URLs),
 *     never a use case, and import nothing that calls them (api, http, effects, streaming, push,
 *     federation);
 *   - nothing outside src/http imports uWebSockets.js;
 *   - configuration (config/) imports nothing from src (types aside).
 *
 * The checker is also run on small fixtures, so a checker that finds nothing fails too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');


interface SourceFile {
  /** Path from the repository root, with forward slashes. */
  file: string;
  text: string;
}

interface Import {
  specifier: string;
  typeOnly: boolean;
  /** The names bound as values (`import { a, type B, c as d }`: a and c; none for `import type`). */
  values: string[];
}

const IMPORT_RE = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:([^'";]*?)\s+from\s+)?['"]([^'"]+)['"]/g;
const DYNAMIC_RE = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

function valueNames(clause: string | undefined): string[] {
  const named = clause?.match(/\{([^}]*)\}/)?.[1] ?? '';
  return named
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '' && !n.startsWith('type '))
    .map((n) => n.split(/\s+as\s+/)[0]!.trim());
}

function importsOf(text: string): Import[] {
  const out: Import[] = [];
  for (const m of text.matchAll(IMPORT_RE)) out.push({ specifier: m[4]!, typeOnly: !!m[2], values: m[2] ? [] : valueNames(m[3]) });
  for (const m of text.matchAll(DYNAMIC_RE)) out.push({ specifier: m[1]!, typeOnly: false, values: [] });
  return out;
}

/** The repository path an import names (relative ones resolved), or the package name. */
function target(from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
}

/** What src/events may import: the floors below it. */
const EVENTS_MAY_IMPORT = ['src/events/', 'src/db/', 'src/jobs/', 'src/lib/', 'actors/'];

const UWS = /^(@btc-vision\/)?uwebsockets\.js$|^uWebSockets\.js$/i;

/** The serializers of the entities only views/ renders. */
const VIEW_SERIALIZERS = new Set([
  'serializeStatus', 'serializeStatusEdit', 'serializePoll', 'serializeNotification', 'serializeNotificationGroup', 'serializeConversation',
]);
/** What views may not import: the layers that call them, and services other than read modules. */
const ABOVE_VIEWS = /^src\/(api|http|effects|streaming|push|federation)\//;

export function violations(files: readonly SourceFile[]): string[] {
  const found: string[] = [];
  for (const { file, text } of files) {
    const isTest = /\.test\.ts$/.test(file);
    for (const imp of importsOf(text)) {
      const to = target(file, imp.specifier);
      if (UWS.test(imp.specifier) && !file.startsWith('src/http/')) found.push(`${file}: imports uWebSockets.js outside src/http`);
      if (file.startsWith('src/api/') && !imp.typeOnly && to.startsWith('src/db/')) {
        found.push(`${file}: a route imports the database layer (${imp.specifier})`);
      }
      if (file.startsWith('actors/') && !isTest && imp.specifier !== 'xstate' && !(imp.specifier.startsWith('.') && to.startsWith('actors/'))) {
        found.push(`${file}: a machine imports ${imp.specifier} (only xstate and actors/ files)`);
      }
      if (file.startsWith('src/services/') && to.startsWith('src/jobs/')) found.push(`${file}: a service imports the job queue (${imp.specifier})`);
      if (file.startsWith('src/services/') && file !== 'src/services/actor-store.ts' && !imp.typeOnly && to === 'src/events/outbox.ts') {
        found.push(`${file}: a service writes the outbox by hand (${imp.specifier}): the actor store writes it`);
      }
      if (file.startsWith('src/effects/') && to.startsWith('src/services/')) found.push(`${file}: effects import a service (${imp.specifier})`);
      if (file.startsWith('src/events/') && !isTest && imp.specifier.startsWith('.') && !EVENTS_MAY_IMPORT.some((p) => to.startsWith(p))) {
        found.push(`${file}: the event spine imports ${imp.specifier} (above it)`);
      }
      if (file.startsWith('config/') && !isTest && !imp.typeOnly && to.startsWith('src/')) found.push(`${file}: configuration imports ${imp.specifier} (config depends on nothing in src)`);
      if (!isTest && !file.startsWith('src/views/') && !file.startsWith('src/serializers/') && to.startsWith('src/serializers/')) {
        const rendering = imp.values.filter((n) => VIEW_SERIALIZERS.has(n));
        if (rendering.length) found.push(`${file}: renders outside src/views (imports ${rendering.join(', ')})`);
      }
      if (file.startsWith('src/views/') && !imp.typeOnly) {
        if (ABOVE_VIEWS.test(to)) found.push(`${file}: a view imports ${imp.specifier} (views are below api, streaming, effects and push)`);
        if (to.startsWith('src/services/') && !to.startsWith('src/services/reads/') && to !== 'src/services/media-storage.ts') {
          found.push(`${file}: a view imports a service (${imp.specifier}); views read through src/services/reads`);
        }
      }
    }
    if (file.startsWith('src/api/') && /\bservices\.db\b|\.db\.(em|sql)\b/.test(text)) {
      found.push(`${file}: a route reaches the database through services.db`);
    }
  }
  return found;
}

function sourceFiles(dir: string): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      const p = path.join(abs, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts')) {
        out.push({ file: path.relative(ROOT, p).split(path.sep).join('/'), text: readFileSync(p, 'utf8') });
      }
    }
  };
  walk(path.join(ROOT, dir));
  return out;
}

describe('architecture', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('actors'), ...sourceFiles('config')];

  it('finds the source it checks', () => {
    expect(files.some((f) => f.file === 'src/services/follows.ts')).toBe(true);
    expect(files.some((f) => f.file === 'actors/follow/follow.machine.ts')).toBe(true);
    expect(files.some((f) => f.file.startsWith('src/api/'))).toBe(true);
  });

  it('keeps the dependency direction', () => {
    expect(violations(files)).toEqual([]);
  });

  it('catches each kind of bad import', () => {
    const bad: SourceFile[] = [
      { file: 'src/api/v1/widgets.ts', text: `import { AccountSchema } from '../../db/entities/index.ts';\n` },
      { file: 'src/api/v1/gadgets.ts', text: `export const x = (s) => s.services.db.sql.query('select 1');\n` },
      { file: 'actors/poll/poll.machine.ts', text: `import { setup } from 'xstate';\nimport { Services } from '../../src/context.ts';\n` },
      { file: 'src/services/polls.ts', text: `import { enqueue } from '../jobs/queue.ts';\n` },
      { file: 'src/services/scheduled-statuses.ts', text: `import { writeOutbox } from '../events/outbox.ts';\n` },
      { file: 'src/effects/surface.ts', text: `import { expireMute } from '../services/relationships.ts';\n` },
      { file: 'src/streaming/hub.ts', text: `import uws from '@btc-vision/uwebsockets.js';\n` },
      { file: 'config/index.ts', text: `import { parseProxyRange } from '../src/lib/client-address.ts';\n` },
      { file: 'src/events/outbox.ts', text: `import type { Services } from '../context.ts';\n` },
      { file: 'src/events/consumers.ts', text: `import { federateConsumer } from '../effects/federate.ts';\n` },
      { file: 'src/streaming/publish.ts', text: `import { serializeStatus } from '../serializers/status.ts';\n` },
      { file: 'src/api/v1/conversations.ts', text: `import {\n  type MastodonConversation,\n  serializeConversation as render,\n} from '../../serializers/conversation.ts';\n` },
      { file: 'src/api/render.ts', text: `export { serializeNotification } from '../serializers/notification.ts';\n` },
      { file: 'src/views/statuses.ts', text: `import { publishNotification } from '../streaming/publish.ts';\n` },
      { file: 'src/views/polls.ts', text: `import { votePoll } from '../services/polls.ts';\n` },
    ];
    expect(violations(bad).map((v) => v.split(':')[0])).toEqual(bad.map((f) => f.file));
    const fine: SourceFile[] = [
      { file: 'src/api/v1/widgets.ts', text: `import type { Account } from '../../db/entities/index.ts';\nimport { follow } from '../../services/follows.ts';\n` },
      { file: 'actors/poll/poll.machine.ts', text: `import { setup } from 'xstate';\nimport { step } from '../runtime/step.ts';\n` },
      { file: 'actors/poll/poll.machine.test.ts', text: `import { describe } from 'vitest';\n` },
      { file: 'src/http/server.ts', text: `import uws from '@btc-vision/uwebsockets.js';\n` },
      { file: 'src/services/polls.ts', text: `import { scheduleTimer } from '../events/timers.ts';\n` },
      { file: 'src/events/catalogue.ts', text: `import type { PollEmitted } from '../../actors/poll/poll.machine.ts';\nimport type { Sql } from '../db/sql.ts';\n` },
      { file: 'src/services/polls.ts', text: `import type { OutboxEvent } from '../events/outbox.ts';\n` },
      { file: 'src/services/actor-store.ts', text: `import { writeOutbox } from '../events/outbox.ts';\n` },
      { file: 'src/effects/notifications.ts', text: `import type { MastodonNotification } from '../serializers/notification.ts';\nimport { renderNotifications } from '../views/notifications.ts';\n` },
      { file: 'src/api/v2/notifications.ts', text: `import { GROUPABLE_TYPES, type NotificationGroupRow } from '../../serializers/notification.ts';\n` },
      { file: 'src/serializers/conversation.ts', text: `import { serializeStatus } from './status.ts';\n` },
      { file: 'src/views/polls.ts', text: `import { findVisiblePoll } from '../services/reads/polls.ts';\nimport { mediaStorage } from '../services/media-storage.ts';\nimport { serializePoll } from '../serializers/poll.ts';\n` },
      { file: 'src/views/notifications.ts', text: `import type { Services } from '../context.ts';\n` },
    ];
    expect(violations(fine)).toEqual([]);
  });
});
