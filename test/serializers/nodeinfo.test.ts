import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import AjvDraft04Module from 'ajv-draft-04';
import {
  NODEINFO_20_REL,
  nodeInfo20Link,
  serializeNodeInfo20,
  serializeNodeInfoLinks,
  type NodeInfoInput,
} from '../../src/serializers/nodeinfo.ts';

const AjvDraft04 = AjvDraft04Module.default;

const repoRoot = path.resolve(import.meta.dirname, '../..');
// The NodeInfo 2.0 JSON Schema (draft-04), from jhass/nodeinfo (schemas/2.0/schema.json), public
// schema data, copied unchanged into test/fixtures: its SHA-256 is that of the published file.
const FIXTURE_SCHEMA = path.resolve(repoRoot, 'test/fixtures/nodeinfo-2.0.schema.json');
const REFERENCE_SHA256 = 'f0d89f5fb3b28854736be2ba2cd10a728bfd51b78729ceff6888b53e7fec6c91';

function validator(schemaPath: string) {
  const ajv = new AjvDraft04({ allErrors: true });
  return ajv.compile(JSON.parse(readFileSync(schemaPath, 'utf8')));
}

const input: NodeInfoInput = {
  softwareVersion: '0.1.0',
  openRegistrations: true,
  users: { total: 42, activeMonth: 9, activeHalfyear: 20 },
  localPosts: 1234,
  nodeName: 'Roost Example',
  nodeDescription: 'A small Roost server for tests & examples.',
};

describe('serializeNodeInfo20', () => {
  it('renders the exact NodeInfo 2.0 document', () => {
    expect(serializeNodeInfo20(input)).toEqual({
      version: '2.0',
      software: { name: 'roost', version: '0.1.0' },
      protocols: ['activitypub'],
      services: { inbound: [], outbound: [] },
      openRegistrations: true,
      usage: { users: { total: 42, activeHalfyear: 20, activeMonth: 9 }, localPosts: 1234 },
      metadata: { nodeName: 'Roost Example', nodeDescription: 'A small Roost server for tests & examples.' },
    });
  });

  it('adds localComments only when given, and extra metadata without overriding the name', () => {
    const out = serializeNodeInfo20({
      ...input,
      openRegistrations: false,
      localComments: 5,
      metadata: { nodeName: 'ignored', features: ['mastodon_api'], federation: { enabled: true } },
    });
    expect(out.openRegistrations).toBe(false);
    expect(out.usage).toEqual({ users: { total: 42, activeHalfyear: 20, activeMonth: 9 }, localPosts: 1234, localComments: 5 });
    expect(out.metadata).toEqual({
      nodeName: 'Roost Example',
      nodeDescription: 'A small Roost server for tests & examples.',
      features: ['mastodon_api'],
      federation: { enabled: true },
    });
  });

  it('clamps counts to non-negative integers so the document stays valid', () => {
    const out = serializeNodeInfo20({
      ...input,
      users: { total: -1, activeMonth: 2.9, activeHalfyear: Number.NaN },
      localPosts: Number.POSITIVE_INFINITY,
    });
    expect(out.usage).toEqual({ users: { total: 0, activeHalfyear: 0, activeMonth: 2 }, localPosts: 0 });
  });

  it('validates against the NodeInfo 2.0 schema (fixture copy)', () => {
    const validate = validator(FIXTURE_SCHEMA);
    for (const doc of [
      serializeNodeInfo20(input),
      serializeNodeInfo20({ ...input, openRegistrations: false, localComments: 0, metadata: { a: 1 } }),
      serializeNodeInfo20({ ...input, users: { total: -5, activeMonth: 0.5, activeHalfyear: Number.NaN } }),
    ]) {
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('the schema check is not vacuous: an extra top-level key or a bad name fails', () => {
    const validate = validator(FIXTURE_SCHEMA);
    expect(validate({ ...serializeNodeInfo20(input), extra: 1 })).toBe(false);
    const doc = serializeNodeInfo20(input);
    expect(validate({ ...doc, software: { ...doc.software, name: 'Roost' } })).toBe(false);
    expect(validate({ ...doc, usage: { ...doc.usage, users: { ...doc.usage.users, total: -1 } } })).toBe(false);
  });

  it('the fixture schema is the reference schema, unchanged', () => {
    expect(createHash('sha256').update(readFileSync(FIXTURE_SCHEMA)).digest('hex')).toBe(REFERENCE_SHA256);
    expect(validator(FIXTURE_SCHEMA)(serializeNodeInfo20(input))).toBe(true);
  });
});

describe('NodeInfo discovery', () => {
  it('serializeNodeInfoLinks points at /nodeinfo/2.0', () => {
    expect(serializeNodeInfoLinks('https://roost.example')).toEqual({
      links: [{ rel: 'http://nodeinfo.diaspora.software/ns/schema/2.0', href: 'https://roost.example/nodeinfo/2.0' }],
    });
  });

  it('tolerates a trailing slash on the base URL', () => {
    expect(nodeInfo20Link('https://roost.example/')).toEqual({
      rel: NODEINFO_20_REL,
      href: 'https://roost.example/nodeinfo/2.0',
    });
  });
});
