// The store's multi-step operations, one Lua script each: Redis runs a script as one atomic step, so
// a token check and the write it guards can never be split by another instance's command.
// Sent as EVALSHA (the script's hash: one short round trip); a server that does not know the script yet
// (new, restarted, SCRIPT FLUSH) answers NOSCRIPT and gets the body once with EVAL.

import { createHash } from 'node:crypto';

/** A Lua script and its SHA-1, as EVALSHA names it. @internal */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

/** A script with its hash. @internal */
export const script = (source: string): LuaScript => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

/**
 * KEYS[1] the key; ARGV: [1] '1' when a value is expected ([2] the value), [3] '1' when a next value is
 * set ([4] the value), [5] its TTL in ms or ''. 1 when it swapped.
 */
export const COMPARE_AND_SET = script(`
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
if ARGV[3] == '1' then
  if ARGV[5] == '' then
    redis.call('SET', KEYS[1], ARGV[4])
  else
    redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
  end
else
  redis.call('DEL', KEYS[1])
end
return 1`);

/** KEYS[1] the counter; ARGV[1] its TTL in ms. The new value. */
export const INCREMENT = script(`
local value = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return value`);

/** KEYS[1] the lock; ARGV[1] the owner token, [2] the new TTL in ms. 1 when it was still the owner's. */
export const RENEW_LOCK = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`);

/** KEYS[1] the lock; ARGV[1] the owner token. 1 when it was still the owner's (and is now free). */
export const RELEASE_LOCK = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`);

/** KEYS[1] the queue (a sorted set); ARGV: [1] score, [2] member, [3] the queue's TTL in ms. */
export const ENQUEUE = script(`
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`);

/** KEYS[1] the queue; ARGV the settled members to remove first. Every member left, lowest score first. */
export const READ_QUEUED = script(`
if #ARGV > 0 then redis.call('ZREM', KEYS[1], unpack(ARGV)) end
return redis.call('ZRANGE', KEYS[1], 0, -1)`);
