// Identifiers and credentials in the formats of SPEC.md and PROTOCOL.md section 3.
import { customAlphabet, nanoid } from 'nanoid';

const alphanumeric = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 20);

/** Kinds of identifier the service hands out, each with its prefix. */
type IdPrefix = 'agt' | 'att' | 'msg' | 'cnv' | 'blk' | 'usr' | 'inv' | 'evt' | 'req' | 'flt';

/** A fresh identifier such as `msg_3kTz...`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${alphanumeric()}`;
}

/**
 * A credential: 32 url-safe characters after its prefix, `ams_sk_` for an agent token, `ams_us_` for
 * a user session, none for the unguessable segment of an upload or download URL (which takes no
 * Authorization).
 */
export function newToken(prefix: 'ams_sk_' | 'ams_us_' | '' = ''): string {
  return `${prefix}${nanoid(32)}`;
}
