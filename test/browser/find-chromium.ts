/**
 * Where the real-browser tests find Chromium: ROOST_CHROMIUM when set, else the first of the
 * usual names on PATH, else the usual install paths (Snap, macOS). No Chromium: a clear error at
 * once, before any server starts.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];
const PATHS = [
  '/snap/bin/chromium',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

export class ChromiumNotFoundError extends Error {
  override name = 'ChromiumNotFoundError';
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export function findChromium(env: Record<string, string | undefined> = process.env, extraPaths: string[] = PATHS): string {
  const explicit = env.ROOST_CHROMIUM;
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new ChromiumNotFoundError(`ROOST_CHROMIUM=${explicit} is not an executable file`);
  }
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const name of NAMES) {
    for (const dir of dirs) {
      const file = path.join(dir, name);
      if (executable(file)) return file;
    }
  }
  for (const file of extraPaths) if (executable(file)) return file;
  throw new ChromiumNotFoundError(
    `No Chromium found: looked for ${NAMES.join(', ')} on PATH and at ${extraPaths.join(', ')}. ` +
      'Install one (Debian/Ubuntu: apt-get install chromium) or set ROOST_CHROMIUM to its executable.',
  );
}
