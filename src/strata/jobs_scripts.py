"""The Lua steps of :mod:`strata.jobstore`: each is one atomic change of one job record.

KEYS[1] is always the record (``strata:job:<id>``); a missing record is left
alone. KEYS[2] is the set of runs that started and have not ended
(``strata:jobs:running``), which the reaper (:mod:`strata.jobs_recovery`) scans;
KEYS[3] the run's task message (START) or the repository's dead letters (the
claims), KEYS[4] (EXHAUST) the message.
"""

from __future__ import annotations

START = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local lost = tonumber(redis.call('HGET', KEYS[1], 'lost') or '0')
if redis.call('HGET', KEYS[1], 'run_open') == '1' then
  lost = redis.call('HINCRBY', KEYS[1], 'lost', 1)
end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'state', 'running', 'started_at', ARGV[1], 'heartbeat_at', ARGV[1],
  'heartbeat_s', ARGV[2], 'worker', ARGV[3], 'owner', ARGV[4], 'error', '', 'finished_at', '',
  'run_open', '1', 'supervisor', ARGV[5], 'queue', ARGV[8])
if ARGV[6] ~= '' then redis.call('SET', KEYS[3], ARGV[6], 'EX', ARGV[9]) end
redis.call('ZADD', KEYS[2], ARGV[7], redis.call('HGET', KEYS[1], 'id'))
return lost
"""

BEAT = """
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'heartbeat_at', ARGV[1])
return 1
"""

# A reader marks a silent run lost; the record stays in the running set (run_open
# still 1) so that a live worker's reaper hands the job back to the queue.
MARK_LOST = """
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
if (redis.call('HGET', KEYS[1], 'heartbeat_at') or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'failed', 'finished_at', ARGV[2], 'error', ARGV[3])
return 1
"""

FAIL_IF_OPEN = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'queued' and state ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'failed', 'finished_at', ARGV[1], 'error', ARGV[2])
redis.call('HDEL', KEYS[1], 'run_open')
redis.call('ZREM', KEYS[2], redis.call('HGET', KEYS[1], 'id'))
return 1
"""

# The reaper's claim on an abandoned run: only if the record is still the run it
# judged (same state, heartbeat and owner, run still open), so two reapers, or a
# run that came back, never both act. ARGV: state, heartbeat_at, owner (as read),
# then the new error. The lost run is counted here (run_open cleared, so the next
# start does not count it again).
_CLAIM = """
if redis.call('HGET', KEYS[1], 'run_open') ~= '1' then return 0 end
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return 0 end
if (redis.call('HGET', KEYS[1], 'heartbeat_at') or '') ~= ARGV[2] then return 0 end
if (redis.call('HGET', KEYS[1], 'owner') or '') ~= ARGV[3] then return 0 end
redis.call('HINCRBY', KEYS[1], 'lost', 1)
redis.call('HDEL', KEYS[1], 'run_open')
redis.call('ZREM', KEYS[2], redis.call('HGET', KEYS[1], 'id'))
"""

# Claimed and sent again: queued, out of the dead letters, one more requeue.
REQUEUE = (
    _CLAIM
    + """
redis.call('HINCRBY', KEYS[1], 'requeued', 1)
redis.call('HSET', KEYS[1], 'state', 'queued', 'error', ARGV[4], 'finished_at', '')
redis.call('ZREM', KEYS[3], redis.call('HGET', KEYS[1], 'id'))
return 1
"""
)

# Claimed and given up (its worker died too often): failed for good, a dead letter.
EXHAUST = (
    _CLAIM
    + """
redis.call('HSET', KEYS[1], 'state', 'failed', 'error', ARGV[4], 'finished_at', ARGV[5])
redis.call('DEL', KEYS[4])
redis.call('ZADD', KEYS[3], ARGV[6], redis.call('HGET', KEYS[1], 'id'))
redis.call('EXPIRE', KEYS[3], ARGV[7])
return 1
"""
)
