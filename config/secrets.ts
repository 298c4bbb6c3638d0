/**
 * Secrets generated on first start and kept in the data directory (mode 0600): the key that signs
 * cookies and OAuth state, and the VAPID key pair Web Push uses. Regenerating them would log every
 * browser out and break every push subscription, so they are created once and read ever after.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync, renameSync, existsSync } from 'node:fs';
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

/**
 * Creates `dir` readable by its owner only (0700), or tightens an existing one: the embedded
 * database's files (its write-ahead log holds the accounts' private keys), the secrets and the
 * control socket live in it. A shared sticky directory (/tmp) named as the data directory is left
 * as it is, as is one owned by another user.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  const ours = typeof process.getuid !== 'function' || st.uid === process.getuid();
  if ((st.mode & 0o077) !== 0 && (st.mode & 0o1000) === 0 && ours) chmodSync(dir, st.mode & 0o7700);
}

export function loadOrCreateSecrets(dataDir: string): RoostSecrets {
  ensurePrivateDir(dataDir);
  const file = secretsPath(dataDir);
  if (existsSync(file)) {
    // Written 0600; tighten a copy that was restored with looser permissions.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
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
