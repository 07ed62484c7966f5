<?php
// A producer as the article's lab ran one: phpredis, one XADD per event at its time, fields
// order, type and v. relab starts it once every consumer is blocked in XREADGROUP (its start
// barrier), so the events' times count from this program's start.

require __DIR__ . '/lib.php';

$redis = redis_connect();
$trace = trace_open();
$stream = env('RELAB_STREAM');
$start = hrtime(true);
foreach (json_decode(env('RELAB_EVENTS'), true) as $e) {
    $due = $start + $e['at_ms'] * 1000000;
    $wait = $due - hrtime(true);
    if ($wait > 0) usleep(intdiv($wait, 1000));
    $ev = ['order' => $e['order'], 'type' => $e['type'], 'v' => $e['version']];
    $id = $redis->xAdd($stream, '*', ['order' => (string) $e['order'], 'type' => $e['type'], 'v' => (string) $e['version']]);
    if ($id === false) {
        fwrite(STDERR, "producer.php: XADD of {$e['type']} failed: " . $redis->getLastError() . "\n");
        exit(1);
    }
    trace($trace, 'publish', ['entry' => $id, 'event' => $ev, 'result' => 'ok', 'attempt' => 1]);
}
