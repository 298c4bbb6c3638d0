/**
 * src/lib/ffmpeg.ts with the packaged binaries: what they are (versions, the encoders Roost
 * uses), and the bounds: a run over its time is killed (reason `timeout`), no more than
 * `concurrency` ffmpeg processes at once, an address-space cap an encoder cannot exceed
 * (reason `failed`), a missing binary is `unavailable`.
 */
import { spawnSync } from 'node:child_process';
import { describe, it, expect } from 'vitest';
import { Ffmpeg, FfmpegError } from '../../src/lib/ffmpeg.ts';

const base = { ffmpegPath: null, ffprobePath: null, concurrency: 1, timeoutMs: 60_000, memoryBytes: 2048 * 1024 * 1024 };

async function failure(p: Promise<unknown>): Promise<FfmpegError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(FfmpegError);
    return e as FfmpegError;
  }
  throw new Error('expected a failure');
}

/** A synthetic source ffmpeg decodes for `seconds` and throws away. */
const busy = (seconds: number, size = '320x240') => ['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=25:duration=${seconds}`, '-f', 'null', '-'];

describe('the packaged ffmpeg and ffprobe', () => {
  it('ship inside the npm packages, run here, and have the encoders Roost uses', () => {
    const ff = new Ffmpeg(base);
    expect(ff.ffmpegPath).toMatch(/node_modules\/@ffmpeg-installer\/[a-z0-9-]+\/ffmpeg$/);
    expect(ff.ffprobePath).toMatch(/node_modules\/@ffprobe-installer\/[a-z0-9-]+\/ffprobe$/);
    const version = spawnSync(ff.ffmpegPath!, ['-hide_banner', '-version'], { encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout).toContain('--enable-gpl');
    const encoders = spawnSync(ff.ffmpegPath!, ['-hide_banner', '-encoders'], { encoding: 'utf8' }).stdout;
    for (const e of ['libx264', 'aac', 'libmp3lame', 'png']) expect(encoders).toMatch(new RegExp(`\\s${e}\\s`));
    expect(spawnSync(ff.ffprobePath!, ['-version'], { encoding: 'utf8' }).status).toBe(0);
  });
});

describe('bounds', () => {
  it('kills a run that outlasts its time', async () => {
    const ff = new Ffmpeg({ ...base, timeoutMs: 300 });
    const e = await failure(ff.ffmpeg(busy(3600)));
    expect(e.reason).toBe('timeout');
    expect(ff.running).toBe(0);
  });

  it('runs at most `concurrency` ffmpeg processes at once; the others wait their turn', async () => {
    const ff = new Ffmpeg({ ...base, concurrency: 2 });
    await Promise.all([1, 2, 3, 4, 5].map(() => ff.ffmpeg(busy(1))));
    expect(ff.peakRunning).toBe(2);
    expect(ff.running).toBe(0);
  }, 60_000);

  it('caps a process’s address space: an encoder that needs more fails instead of growing', async () => {
    const ff = new Ffmpeg({ ...base, memoryBytes: 48 * 1024 * 1024 });
    const e = await failure(ff.ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=1920x1080:rate=25:duration=1', '-c:v', 'libx264', '-f', 'null', '-']));
    expect(e.reason).toBe('failed');
    // The same run within the default cap succeeds.
    await new Ffmpeg(base).ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=1920x1080:rate=25:duration=0.2', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'null', '-']);
  }, 60_000);

  it('reports a binary that is not there as unavailable', async () => {
    const ff = new Ffmpeg({ ...base, ffmpegPath: '/nonexistent/ffmpeg', ffprobePath: '/nonexistent/ffprobe' });
    expect((await failure(ff.ffmpeg(busy(1)))).reason).toBe('unavailable');
    expect((await failure(ff.probe('/dev/null'))).reason).toBe('unavailable');
    const unbounded = new Ffmpeg({ ...base, memoryBytes: 0, ffmpegPath: '/nonexistent/ffmpeg' });
    expect((await failure(unbounded.ffmpeg(busy(1)))).reason).toBe('unavailable');
  });
});
