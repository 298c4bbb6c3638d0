/**
 * Checks serializer output against a component schema of the Mastodon OpenAPI description
 * (abraham/mastodon-openapi, generated from Mastodon's documentation). The components used live in
 * test/fixtures/mastodon-openapi-schemas.json, cut from the 1.4 MB description by
 * test/fixtures/extract-openapi-schemas.ts (add a component there to check another entity).
 *
 * Two checks:
 * - `validate`: JSON Schema 2020-12 validation of the component with Ajv (types, required keys,
 *   enums; formats are not asserted — "iso-639-1" is not a format Ajv knows);
 * - `unknownKeys`: every key the output has must be a property the schema declares, recursively
 *   (the schemas allow additional properties, so Ajv alone would not catch a misspelt key).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020Module from 'ajv/dist/2020.js';

const Ajv2020 = Ajv2020Module.default;

const repoRoot = path.resolve(import.meta.dirname, '../..');
export const OPENAPI_PATH = path.resolve(repoRoot, 'test/fixtures/mastodon-openapi-schemas.json');

type Schema = Record<string, unknown>;

let cached: { doc: Schema; ajv: InstanceType<typeof Ajv2020> } | undefined;

function load() {
  if (!cached) {
    const doc = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Schema;
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc, 'mastodon-openapi');
    cached = { doc, ajv };
  }
  return cached;
}

/** Ajv errors as "path: message" strings; [] when `value` matches the component. */
export function validate(component: string, value: unknown): string[] {
  const { ajv } = load();
  const check = ajv.getSchema(`mastodon-openapi#/components/schemas/${component}`);
  if (!check) throw new Error(`no component ${component}`);
  if (check(value)) return [];
  return (check.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message} ${JSON.stringify(e.params)}`);
}

function resolve(doc: Schema, schema: Schema): Schema {
  let s = schema;
  while (typeof s.$ref === 'string') {
    const parts = s.$ref.replace(/^#\//, '').split('/');
    s = parts.reduce<Schema>((node, key) => node[key] as Schema, doc);
  }
  return s;
}

/** Paths of keys in `value` that the component's schema does not declare. */
export function unknownKeys(component: string, value: unknown): string[] {
  const { doc } = load();
  const out: string[] = [];
  const walk = (schemaIn: Schema, v: unknown, at: string) => {
    const schema = resolve(doc, schemaIn);
    const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (branches) {
      const objectBranch = branches.map((b) => resolve(doc, b)).find((b) => b.properties || b.items);
      if (objectBranch && v !== null) walk(objectBranch, v, at);
      return;
    }
    if (Array.isArray(v)) {
      if (schema.items) v.forEach((item, i) => walk(schema.items as Schema, item, `${at}/${i}`));
      return;
    }
    if (v && typeof v === 'object' && schema.properties) {
      const props = schema.properties as Record<string, Schema>;
      for (const [k, child] of Object.entries(v)) {
        if (!(k in props)) out.push(`${at}/${k}`);
        else walk(props[k]!, child, `${at}/${k}`);
      }
    }
  };
  walk({ $ref: `#/components/schemas/${component}` }, value, '');
  return out;
}
