<?php
// A stream consumer as a PHP worker writes one: phpredis for the stream, pdo_pgsql for the order's
// row, one process per consumer. relab starts it as a role and hands it the lab in RELAB_*
// variables (docs/your-code.md); nothing here is relab's code.
//
//   loop: XREADGROUP GROUP g me COUNT n BLOCK ms STREAMS s >
//         [S4a: SET lock NX PX ttl, retry every retry_ms]
//         job (usleep: the event type's cost)
//         UPDATE tmp_orders ... (plain, or S5's CAS: ... AND version < v)
//         [S4a: release the lock if it is still ours]
//         XACK
//   [recovery: every every_ms, XAUTOCLAIM entries idle min_idle_ms and process them the same way]
//   until the read comes back empty and RELAB_STOP_KEY is set.
//
// WRITE (plain | cas) overrides the lab's write mode, to break a lab from the program's side.

require __DIR__ . '/lib.php';

$me = env('RELAB_CONSUMER');
$stream = env('RELAB_STREAM');
$group = env('RELAB_GROUP');
$costs = json_decode(env('RELAB_JOB_COST_MS'), true);
$mode = getenv('WRITE') ?: env('RELAB_WRITE_MODE');
$lockKey = getenv('RELAB_LOCK_KEY') ?: null;  // "…lock:order:{order}" when the lab takes a lock
$claimIdle = (int) (getenv('RELAB_AUTOCLAIM_MIN_IDLE_MS') ?: 0);
$claimEvery = (int) (getenv('RELAB_AUTOCLAIM_EVERY_MS') ?: 0);

$redis = redis_connect();
$db = pg_connect_pdo();
$trace = trace_open();

$sql = [
    'plain' => 'UPDATE tmp_orders SET status = :status WHERE id = :id',
    'cas'   => 'UPDATE tmp_orders SET status = :status, version = :v WHERE id = :id AND version < :v',
];
if (!isset($sql[$mode])) {
    fwrite(STDERR, "consumer.php: write mode '$mode' is not one this consumer knows (plain, cas)\n");
    exit(2);
}
$update = $db->prepare($sql[$mode]);

function event_of(array $fields): array {
    return ['order' => (int) $fields['order'], 'type' => $fields['type'], 'v' => (int) $fields['v']];
}

// One job: the lock if the lab takes one, the work, the write, the release, the ack.
function process_entry(string $id, array $fields, string $via): void {
    global $redis, $db, $update, $mode, $costs, $stream, $group, $me, $lockKey, $trace;
    $ev = event_of($fields);
    trace($trace, 'receive', ['entry' => $id, 'event' => $ev, 'via' => $via]);
    $lock = null;
    $token = "$me:$id";
    if ($lockKey !== null) {
        $lock = str_replace('{order}', (string) $ev['order'], $lockKey);
        $ttl = (int) env('RELAB_LOCK_TTL_MS');
        $attempts = 1;
        while (!$redis->set($lock, $token, ['NX', 'PX' => $ttl])) {
            usleep((int) env('RELAB_LOCK_RETRY_MS') * 1000);
            $attempts++;
        }
        trace($trace, 'lock_acquire', ['key' => $lock, 'attempts' => $attempts, 'ttl_ms' => $ttl, 'event' => $ev]);
    }
    usleep(($costs[$ev['type']] ?? 0) * 1000);
    $params = ['status' => $ev['type'], 'id' => $ev['order']];
    if ($mode === 'cas') $params['v'] = $ev['v'];
    $update->execute($params);
    trace($trace, 'write', ['entry' => $id, 'event' => $ev, 'status' => $ev['type'], 'affected' => $update->rowCount()]);
    if ($lock !== null) {
        // Compare and delete in one step: never release a lock that expired and is someone else's now.
        $released = $redis->eval(
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
            [$lock, $token], 1);
        trace($trace, 'lock_release', ['key' => $lock, 'result' => (int) $released, 'event' => $ev]);
    }
    $redis->xAck($stream, $group, [$id]);
    trace($trace, 'ack', ['entry' => $id]);
}

function claim_idle(): void {
    global $redis, $stream, $group, $me, $claimIdle;
    $cursor = '0-0';
    do {
        $reply = $redis->rawCommand('XAUTOCLAIM', $stream, $group, $me, (string) $claimIdle, $cursor, 'COUNT',
                                    env('RELAB_AUTOCLAIM_COUNT'));
        $cursor = $reply[0];
        foreach ($reply[1] as $entry) {
            [$id, $flat] = $entry;
            $fields = [];
            for ($i = 0; $i + 1 < count($flat); $i += 2) $fields[$flat[$i]] = $flat[$i + 1];
            process_entry($id, $fields, 'claim');
        }
    } while ($cursor !== '0-0');
}

$block = (int) env('RELAB_BLOCK_MS');
if ($claimEvery > 0) $block = min($block, $claimEvery);
$nextClaim = hrtime(true) + $claimEvery * 1000000;
for (;;) {
    if ($claimEvery > 0 && hrtime(true) >= $nextClaim) {
        claim_idle();
        $nextClaim = hrtime(true) + $claimEvery * 1000000;
    }
    $read = $redis->xReadGroup($group, $me, [$stream => '>'], (int) env('RELAB_READ_COUNT'), $block);
    if (!$read) {
        if ($redis->exists(env('RELAB_STOP_KEY'))) break;
        continue;
    }
    foreach ($read[$stream] as $id => $fields) process_entry($id, $fields, 'new');
}
