// The store's multi-step operations, one Lua script each: Redis runs a script as one atomic step, so
// a token check and the write it guards can never be split by another instance's command, and a
// delivery's admit and settle (src/store/compound.ts) cost one round trip each.
// Sent as EVALSHA (the script's hash: one short round trip); a server that does not know the script yet
// (new, restarted, SCRIPT FLUSH) answers NOSCRIPT and gets the body once with EVAL.

import { createHash } from 'node:crypto';

/** A Lua script and its SHA-1, as EVALSHA names it. @internal */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

const script = (source: string): LuaScript => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

/**
 * KEYS[1] the key; ARGV: [1] '1' when a value is expected ([2] the value; else the key must be absent,
 * which GET answers as false), [3] '1' when a next value is set ([4] the value; else the key is
 * deleted), [5] its TTL in ms or ''. 1 when it swapped.
 */
export const COMPARE_AND_SET = script(`
local expected = ARGV[1] == '1' and ARGV[2] or false
if redis.call('GET', KEYS[1]) ~= expected then return 0 end
if ARGV[3] ~= '1' then
  redis.call('DEL', KEYS[1])
elseif ARGV[5] == '' then
  redis.call('SET', KEYS[1], ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
end
return 1`);

/**
 * KEYS[1] the key; ARGV: [1] its TTL in ms, [2] a command on the key (INCR, ZADD), [3...] the command's
 * other arguments. Runs the command, then sets the key's TTL; answers the command's reply.
 */
export const WITH_TTL = script(`
local reply = redis.call(ARGV[2], KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return reply`);

/**
 * KEYS[1] the lock; ARGV: [1] the owner token, [2] the new TTL in ms ('': release it). 1 when it was
 * still the owner's (and is now extended, or free).
 */
export const IF_OWNER = script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`);

/** KEYS[1] the queue; ARGV the settled members to remove first. Every member left, lowest score first. */
export const READ_QUEUED = script(`
if #ARGV > 0 then redis.call('ZREM', KEYS[1], unpack(ARGV)) end
return redis.call('ZRANGE', KEYS[1], 0, -1)`);

/**
 * KEYS: [1] the dedupe claim (read only when ARGV[1] is '1'), [2] the queue, [3] the lock, [4] a value
 * read with the queue when the lock is won (only when ARGV[10] is '1').
 * ARGV: [1] '1' to claim, [2] the claim's value, [3] its TTL in ms, [4] the member's score, [5] the
 * member, [6] the queue's TTL in ms, [7] the lock token, [8] the lock's TTL in ms, [9] the index of
 * the last member to read (-1: all), [10] '1' to read KEYS[4].
 * Answers {0, current value} (claim refused, nothing queued), {1} (queued, the lock is someone else's)
 * or {2, members, value} (queued, the lock won, the queue read lowest score first, up to ARGV[9], and
 * kept; KEYS[4]'s value when asked and set). No other instance's command lands between the claim, the
 * enqueue and the lock try.
 */
export const ADMIT = script(`
if ARGV[1] == '1' and not redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[3]) then
  return {0, redis.call('GET', KEYS[1])}
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
if not redis.call('SET', KEYS[3], ARGV[7], 'NX', 'PX', ARGV[8]) then return {1} end
local members = redis.call('ZRANGE', KEYS[2], 0, ARGV[9])
if ARGV[10] == '1' then return {2, members, redis.call('GET', KEYS[4])} end
return {2, members}`);

/**
 * KEYS: [1] the lock, [2] the queue, [3...] the marks. ARGV: [1] the lock token, [2] the lock's TTL in
 * ms, [3] the channel the release is published on, [4] its message, [5] the queue's TTL in ms ('':
 * unchanged), [6] the index of the last member to read (-1: all), [7] n, the settled members that
 * follow ([8] to [7 + n]), then each mark's value and TTL.
 * Answers {0} (the lock is not this token's: marks written, nothing else touched), {1, members} (the
 * settled removed, the rest read up to ARGV[6], the lock kept and extended, the queue too) or {2} (the
 * queue is empty: the lock released and the release published).
 */
export const SETTLE = script(`
local n = tonumber(ARGV[7])
for i = 3, #KEYS do
  redis.call('SET', KEYS[i], ARGV[n + 2 * i + 2], 'PX', ARGV[n + 2 * i + 3])
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
if n > 0 then redis.call('ZREM', KEYS[2], unpack(ARGV, 8, 7 + n)) end
local members = redis.call('ZRANGE', KEYS[2], 0, ARGV[6])
if #members > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if ARGV[5] ~= '' then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
  return {1, members}
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return {2}`);
