import { describe, expect, it } from 'vitest';
import { HttpError, httpError, json, stringResponse, StringResponse, validationError } from '../../src/http/index.ts';

describe('json() responses', () => {
  it('are real Responses with the JSON type, status and body', async () => {
    const r = json({ a: 1, b: 'é' });
    expect(r).toBeInstanceOf(Response);
    expect(r.status).toBe(200);
    expect(r.ok).toBe(true);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.bodyUsed).toBe(false);
    expect(await r.json()).toEqual({ a: 1, b: 'é' });
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrowError(TypeError);
    expect(r.body).toBeNull();
  });

  it('support status, headers, and an overriding content type', async () => {
    const r = json({ id: '1' }, { status: 201, headers: { link: '<x>; rel="next"', 'content-type': 'application/activity+json' } });
    expect(r.status).toBe(201);
    expect([...r.headers]).toEqual([
      ['content-type', 'application/activity+json'],
      ['link', '<x>; rel="next"'],
    ]);
    expect(await r.text()).toBe('{"id":"1"}');
  });

  it('expose the body as a stream, bytes, arrayBuffer and blob, and clone', async () => {
    const enc = (s: string) => [...new TextEncoder().encode(s)];
    expect(enc(await new Response(json([1]).body).text())).toEqual(enc('[1]'));
    expect([...(await json('é').bytes())]).toEqual(enc('"é"'));
    expect([...new Uint8Array(await json(null).arrayBuffer())]).toEqual(enc('null'));
    const blob = await json({}).blob();
    expect(blob.type).toBe('application/json; charset=utf-8');
    expect(await blob.text()).toBe('{}');
    const a = json({ x: 1 }, { status: 202 });
    const b = a.clone();
    expect(b.status).toBe(202);
    expect(await a.text()).toBe('{"x":1}');
    expect(await b.text()).toBe('{"x":1}');
    expect(() => a.clone()).toThrowError(TypeError);
  });

  it('let the server skip header iteration only while nobody touched the headers', () => {
    const r = json({});
    expect(StringResponse.untouchedType(r as StringResponse)).toBe('application/json; charset=utf-8');
    r.headers.set('x-later', '1');
    expect(StringResponse.untouchedType(r as StringResponse)).toBeNull();
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(StringResponse.peek(r)).toBe('{}');
    expect(StringResponse.peek(new Response('x'))).toBeUndefined();
  });

  it('stringResponse carries any text', async () => {
    const r = stringResponse('<p>hi</p>', { headers: { 'content-type': 'text/html' } });
    expect(r.headers.get('content-type')).toBe('text/html');
    expect(await r.text()).toBe('<p>hi</p>');
  });
});

describe('errors', () => {
  it('httpError keeps error first and cannot be overridden by extra', async () => {
    const e = httpError(401, 'invalid_token', { error_description: 'expired', error: 'ignored' });
    expect(e).toBeInstanceOf(HttpError);
    expect(e.body).toEqual({ error: 'invalid_token', error_description: 'expired' });
    expect(Object.keys(e.body)).toEqual(['error', 'error_description']);
    const r = e.toResponse();
    expect(r.status).toBe(401);
    expect(await r.text()).toBe('{"error":"invalid_token","error_description":"expired"}');
  });

  it('validationError words the message as Mastodon does', () => {
    expect(validationError('', { 'keywords.keyword': [{ error: 'ERR_BLANK', description: "can't be blank" }] }).body.error).toBe(
      "Validation failed: Keywords keyword can't be blank",
    );
    expect(validationError('Text is too long', {}).body).toEqual({ error: 'Validation failed: Text is too long', details: {} });
    expect(validationError('Validation failed: X', {}).status).toBe(422);
  });
});
