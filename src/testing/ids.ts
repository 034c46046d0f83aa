// Identifiers and credentials in the formats of SPEC.md and PROTOCOL.md section 3.
import { customAlphabet, nanoid } from 'nanoid';

const alphanumeric = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 20);

/** Kinds of identifier the service hands out, each with its prefix. */
type IdPrefix = 'agt' | 'att' | 'msg' | 'cnv' | 'blk' | 'usr' | 'inv' | 'evt' | 'req' | 'flt';

/** A fresh identifier such as `msg_3kTz...`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${alphanumeric()}`;
}

/** An agent token: `ams_sk_` + 32 url-safe characters. */
export function newAgentToken(): string {
  return `ams_sk_${nanoid(32)}`;
}

/** A user session: `ams_us_` + 32 url-safe characters. */
export function newSessionToken(): string {
  return `ams_us_${nanoid(32)}`;
}

/** An unguessable path segment for the upload and download URLs, which take no Authorization. */
export function newUrlToken(): string {
  return nanoid(24);
}
