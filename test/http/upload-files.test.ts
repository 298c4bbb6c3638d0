/**
 * The temporary files of an upload pause it while the disk is behind and resume it on 'drain' —
 * and also when the file part ends while behind: an ended stream emits no 'drain', and the rest
 * of the body (the closing delimiter) must still arrive. (A 16 MB avatar sent at once stalled
 * until uWS cut the connection after 30 s.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UploadFiles } from '../../src/http/upload-files.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'roost-upload-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('UploadFiles backpressure', () => {
  it('resumes the upload when a part ends while its file is behind, and writes the whole file', async () => {
    const pressure: boolean[] = [];
    const files = new UploadFiles(dir, (full) => pressure.push(full));
    const sink = files.open({ name: 'avatar', filename: 'a.png', contentType: 'image/png' } as never);
    sink.write(Buffer.alloc(1024 * 1024));
    expect(pressure).toEqual([true]);
    const file = sink.finish(1024 * 1024);
    expect(pressure).toEqual([true, false]);
    await files.written();
    expect((await file.bytes()).length).toBe(1024 * 1024);
    files.remove();
  });

  it('resumes on drain while the part goes on', async () => {
    const pressure: boolean[] = [];
    const files = new UploadFiles(dir, (full) => pressure.push(full));
    const sink = files.open({ name: 'file', filename: 'b.bin', contentType: 'application/octet-stream' } as never);
    sink.write(Buffer.alloc(1024 * 1024));
    await new Promise((r) => setTimeout(r, 200));
    expect(pressure).toEqual([true, false]);
    sink.finish(1024 * 1024);
    await files.written();
    files.remove();
  });
});
