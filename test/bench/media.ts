/**
 * Media: one video through Roost next to the same ffmpeg command alone, in the same run.
 *
 * A 20 s 1920×1080 30 fps clip (MPEG-4 part 2 + MP3, so it must be transcoded) is made with the
 * packaged ffmpeg. Then, interleaved for `rounds` rounds:
 *
 *   - alone: the transcode command Roost runs for it (src/services/media-av.ts transcodeArgs:
 *     H.264 veryfast + AAC, yuv420p, faststart), run directly, timed;
 *   - Roost: a `roost start` process (embedded database, default media settings) takes the clip on
 *     POST /api/v2/media; timed from the upload's first byte to GET /api/v1/media/:id answering 200
 *     (the upload, ffprobe in the request, the queue, the transcode, the thumbnail, the blurhash,
 *     the stores), the Roost process's RSS sampled every 50 ms meanwhile, and its ffmpeg child's.
 *
 * Prints the medians and the ratio (goal ≤ 1.2×), and the peak RSS of Roost and of its ffmpeg.
 *
 *   npm run bench -- media [rounds=3]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ffmpeg } from '../../src/lib/ffmpeg.ts';
import { readProbe, transcodeArgs } from '../../src/services/media-av.ts';
import { fmtRatio, table } from './lib/report.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/cli.ts');
const MB = 1024 * 1024;

interface Server {
  port: number;
  pid: number;
  dataDir: string;
  log(): string;
  stop(): Promise<void>;
}

async function startRoost(): Promise<Server> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-bench-media-'));
  const child: ChildProcess = spawn(process.execPath, [cli, 'start'], {
    cwd: root,
    env: { ...process.env, ROOST_DATA_DIR: dataDir, ROOST_PORT: '0', ROOST_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`roost exited ${code}: ${out.slice(-2000)}`)));
    setTimeout(() => reject(new Error(`roost did not listen within 120 s: ${out.slice(-2000)}`)), 120_000).unref();
  });
  // The log stays readable for a failure's report (its last 64 KiB).
  const keep = (d: Buffer) => (out = (out + d).slice(-65536));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    port,
    log: () => out,
    pid: child.pid!,
    dataDir,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A confirmed user made through the operator's command, and its token (password grant). */
async function userToken(server: Server): Promise<string> {
  const out = execFileSync(process.execPath, [cli, 'accounts', 'create', 'bencher', '--email', 'bencher@example.com', '--confirmed'], {
    cwd: root,
    env: { ...process.env, ROOST_DATA_DIR: server.dataDir, ROOST_LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  const password = /New password: (\S+)/.exec(out)?.[1];
  if (!password) throw new Error(`no password in: ${out}`);
  const base = `http://127.0.0.1:${server.port}`;
  const app = (await (
    await fetch(`${base}/api/v1/apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'bench', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' }),
    })
  ).json()) as { client_id: string; client_secret: string };
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'bencher@example.com', password, scope: 'read write' }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
  return body.access_token;
}

function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The direct children of a process (Linux). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function main(args: string[]): Promise<number> {
  const rounds = Number(args[0] ?? 3);
  const ff = new Ffmpeg({ ffmpegPath: null, ffprobePath: null, concurrency: 1, timeoutMs: 600_000, memoryBytes: 0 });
  const ffmpeg = ff.ffmpegPath!;
  const dir = mkdtempSync(path.join(tmpdir(), 'roost-bench-media-clip-'));
  const clip = path.join(dir, 'clip.mp4');
  execFileSync(ffmpeg, [
    '-nostdin', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=1920x1080:rate=30:duration=20', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=20',
    '-c:v', 'mpeg4', '-q:v', '31', '-g', '300', '-c:a', 'libmp3lame', '-b:a', '48k', '-shortest', clip,
  ]);
  const probe = readProbe(await ff.probe(clip), 'video')!;
  const command = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...transcodeArgs(probe, clip, path.join(dir, 'alone.mp4'))];
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`clip: ${(readFileSync(clip).length / MB).toFixed(1)} MB, ${probe.width}x${probe.height} ${probe.frameRate} ${probe.duration} s ${probe.videoCodec}+${probe.audioCodec}; load average ${load}`);
  console.log(`the command alone: ffmpeg ${command.join(' ')}`);

  const server = await startRoost();
  const alone: number[] = [];
  const viaRoost: number[] = [];
  let roostPeak = 0;
  let ffmpegPeak = 0;
  const idle = rssOf(server.pid);
  try {
    const token = await userToken(server);
    const base = `http://127.0.0.1:${server.port}`;
    const bytes = readFileSync(clip);
    for (let round = 0; round < rounds; round++) {
      let t0 = performance.now();
      // (asynchronously: a blocked event loop would miss the server closing an idle keep-alive connection)
      await new Promise<void>((resolve, reject) => {
        const p = spawn(ffmpeg, command, { stdio: ['ignore', 'ignore', 'inherit'] });
        p.once('error', reject);
        p.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg alone exited ${code}`))));
      });
      alone.push(performance.now() - t0);

      const sampler = setInterval(() => {
        roostPeak = Math.max(roostPeak, rssOf(server.pid));
        for (const c of childrenOf(server.pid)) ffmpegPeak = Math.max(ffmpegPeak, rssOf(c));
      }, 50);
      try {
        t0 = performance.now();
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(bytes)]), 'clip.mp4');
        const res = await fetch(`${base}/api/v2/media`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form }).catch((e) => {
          throw new Error(`upload failed (${(e as Error).message}); the server's log ends: ${server.log().slice(-3000)}`);
        });
        const body = (await res.json()) as { id: string };
        if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
        for (;;) {
          const g = await fetch(`${base}/api/v1/media/${body.id}`, { headers: { authorization: `Bearer ${token}` } });
          const m = (await g.json()) as { url: string | null };
          if (g.status === 200) break;
          if (g.status !== 206) throw new Error(`processing: ${g.status} ${JSON.stringify(m)}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        viaRoost.push(performance.now() - t0);
      } finally {
        clearInterval(sampler);
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const ratio = median(viaRoost) / median(alone);
  console.log(
    table(
      ['figure', 'Roost', 'baseline', 'ratio'],
      [
        [
          'a 20 s 1080p clip, upload to 200',
          `${(median(viaRoost) / 1000).toFixed(2)} s (${viaRoost.map((t) => (t / 1000).toFixed(2)).join(', ')})`,
          `the same ffmpeg command alone ${(median(alone) / 1000).toFixed(2)} s (${alone.map((t) => (t / 1000).toFixed(2)).join(', ')})`,
          `${fmtRatio(ratio)} (goal ≤ 1.2×)`,
        ],
        ['peak RSS meanwhile', `Roost ${(roostPeak / MB).toFixed(0)} MB; its ffmpeg ${(ffmpegPeak / MB).toFixed(0)} MB`, `Roost idle ${(idle / MB).toFixed(0)} MB`, '—'],
      ],
    ),
  );
  return 0;
}
