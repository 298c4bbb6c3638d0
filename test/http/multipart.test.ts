import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.ts';
import { DEFAULT_MULTIPART_LIMITS, memorySink, MultipartParser, multipartBoundary, parseMultipart } from '../../src/http/multipart.ts';

const CT = 'multipart/form-data; boundary=XyZ';

function body(...parts: Array<string | Buffer>): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

function errorOf(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (e) {
    return e as HttpError;
  }
  throw new Error('expected an error');
}

describe('parseMultipart', () => {
  it('parses fields and files, with preamble and epilogue, byte-exact', async () => {
    const bin = Buffer.from([0, 1, 2, 13, 10, 45, 45, 88, 255]); // contains "\r\n--X"
    const b = body(
      'preamble\r\n',
      '--XyZ\r\nContent-Disposition: form-data; name="status"\r\n\r\nhello\r\nworld é\r\n',
      '--XyZ\r\nContent-Disposition: form-data; name="media_ids[]"\r\n\r\n1\r\n',
      '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/x-thing\r\n\r\n',
      bin,
      '\r\n--XyZ--\r\nepilogue',
    );
    const r = parseMultipart(b, CT);
    expect(r.fields).toEqual([
      ['status', 'hello\r\nworld é'],
      ['media_ids[]', '1'],
    ]);
    expect(r.files).toHaveLength(1);
    expect(r.files[0]).toMatchObject({ field: 'file', filename: 'a.bin', type: 'application/x-thing', size: bin.length });
    expect(Buffer.from(await r.files[0].bytes()).equals(bin)).toBe(true);
    expect(r.files[0].path).toBeNull();
  });

  it('reads quoted boundaries, filename*, escaped quotes and Windows paths; defaults the type', async () => {
    const b = body(
      '--a b\r\nContent-Disposition: form-data; name="f1"; filename="x.txt"; filename*=UTF-8\'\'%C3%A9t%C3%A9.txt\r\n\r\nA\r\n',
      '--a b\r\nContent-Disposition: form-data; name="f2"; filename="say \\"hi\\".txt"\r\n\r\nB\r\n',
      '--a b\r\nContent-Disposition: form-data; name="f3"; filename="C:\\Users\\me\\c.png"\r\n\r\nC\r\n',
      '--a b--\r\n',
    );
    const r = parseMultipart(b, 'multipart/form-data; boundary="a b"');
    expect(await Promise.all(r.files.map(async (f) => [f.filename, f.type, Buffer.from(await f.bytes()).toString()]))).toEqual([
      ['été.txt', 'application/octet-stream', 'A'],
      ['say "hi".txt', 'application/octet-stream', 'B'],
      ['c.png', 'application/octet-stream', 'C'],
    ]);
  });

  it('skips file parts with an empty filename (an empty file input), as Rack does', () => {
    const b = body('--XyZ\r\nContent-Disposition: form-data; name="avatar"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--XyZ--');
    expect(parseMultipart(b, CT)).toEqual({ fields: [], files: [] });
  });

  it('handles an empty form and transport padding after the boundary', () => {
    expect(parseMultipart(body('--XyZ--\r\n'), CT)).toEqual({ fields: [], files: [] });
    expect(parseMultipart(body('--XyZ  \r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XyZ--'), CT).fields).toEqual([['a', '1']]);
  });

  it('answers malformed bodies with 400', () => {
    expect(errorOf(() => parseMultipart(body('x'), 'multipart/form-data')).body).toEqual({ error: 'Malformed multipart body: no boundary in Content-Type' });
    expect(errorOf(() => parseMultipart(body('nothing here'), CT)).body).toEqual({ error: 'Malformed multipart body: boundary not found' });
    expect(errorOf(() => parseMultipart(body('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nno end'), CT)).body).toEqual({
      error: 'Malformed multipart body: part not terminated by a boundary',
    });
    expect(errorOf(() => parseMultipart(body('--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--'), CT)).body).toEqual({
      error: 'Malformed multipart body: part without Content-Disposition name',
    });
    expect(errorOf(() => parseMultipart(body('--XyZ\r\nContent-Disposition: form-data; name="a"\r\nno blank line'), CT)).status).toBe(400);
    expect(errorOf(() => parseMultipart(body('--XyZjunk\r\n'), CT)).status).toBe(400);
  });

  it('enforces part, file and size limits with 413', () => {
    const part = (name: string, file?: string, content = 'x') =>
      `--XyZ\r\nContent-Disposition: form-data; name="${name}"${file ? `; filename="${file}"` : ''}\r\n\r\n${content}\r\n`;
    const limits = { ...DEFAULT_MULTIPART_LIMITS, maxParts: 2, maxFiles: 1, maxFileBytes: 4, maxFieldBytes: 3 };
    let e = errorOf(() => parseMultipart(body(part('a'), part('b'), part('c'), '--XyZ--'), CT, limits));
    expect([e.status, e.body.error]).toEqual([413, 'Too many multipart parts (limit 2)']);
    e = errorOf(() => parseMultipart(body(part('a', 'a.txt'), part('b', 'b.txt'), '--XyZ--'), CT, limits));
    expect([e.status, e.body.error]).toEqual([413, 'Too many files (limit 1)']);
    e = errorOf(() => parseMultipart(body(part('a', 'a.txt', '12345'), '--XyZ--'), CT, limits));
    expect([e.status, e.body.error]).toEqual([413, 'File too large (limit 4 bytes)']);
    e = errorOf(() => parseMultipart(body(part('a', undefined, '1234'), '--XyZ--'), CT, limits));
    expect([e.status, e.body.error]).toEqual([413, 'Form field too large (limit 3 bytes)']);
  });

  it('extracts boundaries', () => {
    expect(multipartBoundary('multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW')).toBe('----WebKitFormBoundary7MA4YWxkTrZu0gW');
    expect(multipartBoundary('multipart/form-data; charset=utf-8; boundary="q r"')).toBe('q r');
    expect(multipartBoundary('multipart/form-data')).toBeNull();
  });
});

describe('MultipartParser (chunk by chunk)', () => {
  it('gives the same fields and files whatever the chunk boundaries', async () => {
    const bin = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
    const b = Buffer.concat([
      Buffer.from('preamble\r\n--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--Xy\r\n'),
      Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n\r\n'),
      bin,
      Buffer.from('\r\n--XyZ--\r\nepilogue'),
    ]);
    const whole = parseMultipart(b, CT);
    for (const size of [1, 2, 5, 7, 64, 1000]) {
      const parser = new MultipartParser(CT, DEFAULT_MULTIPART_LIMITS, memorySink);
      for (let i = 0; i < b.length; i += size) parser.push(Buffer.from(b.subarray(i, i + size)));
      const r = parser.end();
      expect(r.fields).toEqual(whole.fields);
      expect(r.fields).toEqual([['a', 'x\r\n--Xy']]);
      expect(r.files).toHaveLength(1);
      expect(Buffer.from(await r.files[0].bytes()).equals(bin)).toBe(true);
    }
  });

  it('refuses a file over its limit as soon as the bytes pass it', () => {
    const parser = new MultipartParser(CT, { ...DEFAULT_MULTIPART_LIMITS, maxFileBytes: 100 }, memorySink);
    parser.push(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\n'));
    parser.push(Buffer.alloc(90));
    expect(errorOf(() => parser.push(Buffer.alloc(90))).status).toBe(413);
  });
});
