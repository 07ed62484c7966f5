<?php
// A client of an HTTP API behind the idempotency middleware of article 002 (§1.2), written as a
// Laravel app would have it, minus the framework: the middleware claims the key with one
// SET … NX GET, runs the business logic (an INSERT into orders), stores the answer, and replays it
// to a request that comes again. One process per client; relab gives its requests in
// RELAB_REQUESTS and the go signal in RELAB_GO_KEY (docs/your-code.md).
//
// REDIS_CLIENT  phpredis (default) or predis: the same middleware on either driver
// CHECK         how the middleware tells "nobody had the key" from "someone had it":
//               false  `$old !== false` is the replay branch (right under phpredis, which answers false)
//               null   `$old !== null` is the replay branch (right under Predis, which answers null)

require __DIR__ . '/lib.php';

$client = getenv('REDIS_CLIENT') ?: 'phpredis';
$check = getenv('CHECK') ?: 'false';
$trace = trace_open();
$db = pg_connect_pdo();
$me = env('RELAB_ACTOR');

if ($client === 'predis') {
    require '/usr/share/php/Predis/autoload.php';
    $predis = new Predis\Client(env('RELAB_REDIS_URL'));
    $predis->client('SETNAME', env('RELAB_CLIENT_NAME'));
} else {
    $redis = redis_connect();
}

// The claim: phase 1's value, set only if nobody has the key, and the old value in the same call.
function claim(string $key, string $value, int $ttl_ms) {
    global $client, $predis, $redis;
    if ($client === 'predis') return $predis->set($key, $value, 'PX', $ttl_ms, 'NX', 'GET');
    // phpredis 5.3.7's set() drops GET from its options (it sends SET k v PX ttl NX and answers
    // true/false), so the command goes as written; a nil reply still comes back as false.
    return $redis->rawCommand('SET', $key, $value, 'NX', 'GET', 'PX', (string) $ttl_ms);
}

function store(string $key, string $value, int $ttl_ms): void {
    global $client, $predis, $redis;
    if ($client === 'predis') $predis->set($key, $value, 'PX', $ttl_ms, 'XX');
    else $redis->set($key, $value, ['XX', 'PX' => $ttl_ms]);
}

// The middleware around the business logic: [code, body, source, branch].
function handle(array $q): array {
    global $check, $db;
    $key = env('RELAB_KEY_PREFIX') . strtr(env('RELAB_KEY_FORMAT'),
        ['{user_id}' => $q['user_id'], '{client_key}' => $q['client_key']]);
    $hash = hash('xxh128', $q['payload']);
    $old = claim($key, json_encode(['status' => 'in_progress', 'hash' => $hash]), (int) env('RELAB_CLAIM_TTL_MS'));
    $replay = $check === 'null' ? $old !== null : $old !== false;
    if ($replay) {
        $prev = json_decode((string) $old, true);
        if (($prev['hash'] ?? null) !== $hash) return [422, '{"error":"Idempotency-Key used for another request"}', 'mismatch', 'replay'];
        if ($prev['status'] === 'in_progress') return [409, '{"error":"in progress, retry later"}', 'in_progress', 'replay'];
        return [$prev['code'], $prev['body'], 'replay', 'replay'];
    }
    usleep($q['work_ms'] * 1000);
    $insert = $db->prepare('INSERT INTO ' . env('RELAB_ORDERS_TABLE') . ' (user_id, idem_key, payload) VALUES (?, ?, ?) RETURNING id');
    $insert->execute([$q['user_id'], $q['user_id'] . ':' . $q['client_key'], $q['payload']]);
    $body = json_encode(['order_id' => (int) $insert->fetchColumn()]);
    store($key, json_encode(['status' => 'done', 'hash' => $hash, 'code' => 201, 'body' => $body]), (int) env('RELAB_DONE_TTL_MS'));
    return [201, $body, 'created', 'first'];
}

function kv_set(string $key, string $value): void {
    global $client, $predis, $redis;
    $client === 'predis' ? $predis->set($key, $value) : $redis->set($key, $value);
}
function kv_get(string $key) {
    global $client, $predis, $redis;
    return $client === 'predis' ? $predis->get($key) : $redis->get($key);
}

// The start barrier: ready, then the go signal's value is the CLOCK_MONOTONIC instant of the origin.
kv_set(env('RELAB_READY_KEY'), '1');
while (!($go = kv_get(env('RELAB_GO_KEY')))) usleep(1000);
$origin = (int) $go;
$retry = json_decode(env('RELAB_RETRY'), true);
$sends = [];
foreach (json_decode(env('RELAB_REQUESTS'), true) as $i => $q)
    foreach ($q['send_at_ms'] as $at) $sends[] = [$at, $i, $q];
usort($sends, fn($a, $b) => $a[0] <=> $b[0]);
$attempts = [];
foreach ($sends as [$at, $i, $q]) {
    $wait = $origin + $at * 1000000 - hrtime(true);
    if ($wait > 0) usleep(intdiv($wait, 1000));
    $label = "$me#" . ($i + 1);
    for ($k = 1;; $k++) {
        $attempt = $attempts[$i] = ($attempts[$i] ?? 0) + 1;
        trace($trace, 'send', ['request' => $label, 'user_id' => $q['user_id'], 'client_key' => $q['client_key'],
                               'payload' => $q['payload'], 'attempt' => $attempt]);
        [$code, $body, $source, $branch] = handle($q);
        trace($trace, 'answer', ['request' => $label, 'user_id' => $q['user_id'], 'attempt' => $attempt,
                                 'code' => $code, 'body' => $body, 'source' => $source, 'branch' => $branch]);
        if ($k >= $retry['max_attempts'] || !in_array($code, $retry['on'], true)) break;
        usleep($retry['every_ms'] * 1000);
    }
}
