/**
 * Secrets generated on first start and kept in the data directory (mode 0600): the key that signs
 * cookies and OAuth state, and the VAPID key pair Web Push uses. Regenerating them would log every
 * browser out and break every push subscription, so they are created once and read ever after.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, renameSync, existsSync } from 'node:fs';
import path from 'node:path';
import webpush from 'web-push';
import { ConfigError } from './index.ts';

export interface RoostSecrets {
  secretKeyBase: string;
  vapidPublicKey: string;
  vapidPrivateKey: string;
}

export function secretsPath(dataDir: string): string {
  return path.join(dataDir, 'secrets.json');
}

export function loadOrCreateSecrets(dataDir: string): RoostSecrets {
  const file = secretsPath(dataDir);
  if (existsSync(file)) {
    let parsed: Partial<RoostSecrets>;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new ConfigError(`Invalid secrets file ${file}: ${(e as Error).message}`);
    }
    for (const k of ['secretKeyBase', 'vapidPublicKey', 'vapidPrivateKey'] as const) {
      if (typeof parsed[k] !== 'string' || parsed[k] === '') {
        throw new ConfigError(`Invalid secrets file ${file}: "${k}" is missing`);
      }
    }
    return parsed as RoostSecrets;
  }
  mkdirSync(dataDir, { recursive: true });
  const vapid = webpush.generateVAPIDKeys();
  const secrets: RoostSecrets = {
    secretKeyBase: randomBytes(64).toString('hex'),
    vapidPublicKey: vapid.publicKey,
    vapidPrivateKey: vapid.privateKey,
  };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
  return secrets;
}
