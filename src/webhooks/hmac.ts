// HMAC-SHA256 with a webhook secret's key, prepared once per secret rather than per delivery. On Node
// (and any runtime with `process.getBuiltinModule`) it is node:crypto with a KeyObject, about 3 µs a
// signature; elsewhere Web Crypto, with the imported CryptoKey kept (an importKey + sign per call cost
// about 90 µs on Node). node:crypto is looked up when first needed, never imported, so the package
// still bundles for browsers and workers.

import type * as NodeCrypto from 'node:crypto';

/** Signs `{id}.{timestamp}.{body}` and answers the signature in base64 (without `v1,`). */
export type Signer = (id: string, timestamp: number | string, body: Uint8Array) => string | Promise<string>;

const encoder = new TextEncoder();

let nodeCrypto: typeof NodeCrypto | null | undefined;

/** node:crypto when the runtime offers it synchronously; null elsewhere (browsers, most workers). */
function builtinCrypto(): typeof NodeCrypto | null {
  if (nodeCrypto !== undefined) return nodeCrypto;
  try {
    const getBuiltin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
      ?.getBuiltinModule;
    const found = typeof getBuiltin === 'function' ? getBuiltin('node:crypto') : undefined;
    nodeCrypto =
      typeof (found as typeof NodeCrypto | undefined)?.createHmac === 'function'
        ? (found as typeof NodeCrypto)
        : null;
  } catch {
    nodeCrypto = null;
  }
  return nodeCrypto;
}

/** base64 of bytes, without Node's Buffer. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A signer for the key bytes of one secret; `node` null forces Web Crypto (as on runtimes without it). */
export function createSigner(
  key: Uint8Array<ArrayBuffer>,
  node: typeof NodeCrypto | null = builtinCrypto(),
): Signer {
  if (node) {
    const keyObject = node.createSecretKey(key);
    return (id, timestamp, body) =>
      node.createHmac('sha256', keyObject).update(`${id}.${timestamp}.`).update(body).digest('base64');
  }
  let cryptoKey: Promise<CryptoKey> | undefined;
  return async (id, timestamp, body) => {
    cryptoKey ??= crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const prefix = encoder.encode(`${id}.${timestamp}.`);
    const signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix, 0);
    signed.set(body, prefix.length);
    return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', await cryptoKey, signed)));
  };
}

/** Compares without an early exit, so the time taken does not tell how much of a guess was right. */
export function timingSafeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i % (b.length || 1));
  return diff === 0;
}
