/**
 * An uploaded file as services take it: bytes in memory, or a file whose size is known and whose
 * bytes are read on demand (a multipart part the server wrote to a temporary file,
 * src/http/upload-files.ts). Services check the size first, so a file over its limit is refused
 * without being read.
 */
export type Upload = Uint8Array | { readonly size: number; readonly path?: string | null; bytes(): Promise<Uint8Array> };

/** The temporary file an upload was written to, when it was (tools that read files take it as is). */
export function uploadPath(upload: Upload): string | null {
  return upload instanceof Uint8Array ? null : typeof upload.path === 'string' ? upload.path : null;
}

export function uploadSize(upload: Upload): number {
  return upload instanceof Uint8Array ? upload.byteLength : upload.size;
}

export async function uploadBytes(upload: Upload): Promise<Uint8Array> {
  return upload instanceof Uint8Array ? upload : upload.bytes();
}
