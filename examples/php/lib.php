<?php
// What every example program needs of its environment: the connections relab's variables describe
// (docs/your-code.md) and the optional trace on RELAB_TRACE_FD.

function env(string $name): string {
    $v = getenv($name);
    if ($v === false) {
        fwrite(STDERR, basename($_SERVER['argv'][0]) . ": $name is not set: run me as a role of a relab lab\n");
        exit(2);
    }
    return $v;
}

// phpredis, named as relab asks (its start barrier and its link faults find the connection by name).
function redis_connect(): Redis {
    $r = new Redis();
    $r->connect(env('RELAB_REDIS_HOST'), (int) env('RELAB_REDIS_PORT'));
    if (env('RELAB_REDIS_PASSWORD') !== '') $r->auth(env('RELAB_REDIS_PASSWORD'));
    $r->select((int) env('RELAB_REDIS_DB'));
    $r->client('setname', env('RELAB_CLIENT_NAME'));
    return $r;
}

// pdo_pgsql on the trial's schema, with the application_name relab's write log knows it by.
function pg_connect_pdo(): PDO {
    $dsn = sprintf("pgsql:host=%s;port=%s;dbname=%s;application_name=%s;options='-csearch_path=%s'",
        env('RELAB_PG_HOST'), env('RELAB_PG_PORT'), env('RELAB_PG_DBNAME'), env('RELAB_PG_APPLICATION_NAME'),
        env('RELAB_PG_SCHEMA'));
    return new PDO($dsn, env('RELAB_PG_USER'), env('RELAB_PG_PASSWORD'), [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
}

// The trace descriptor, or null when relab passes none (the program is then observed from outside only).
function trace_open() {
    $fd = getenv('RELAB_TRACE_FD');
    return $fd === false ? null : fopen("php://fd/$fd", 'a');
}

// One JSON line: the op and its fields, stamped with CLOCK_MONOTONIC (relab's clock too).
function trace($trace, string $op, array $fields): void {
    if ($trace === null) return;
    fwrite($trace, json_encode(['op' => $op, 't_ns' => hrtime(true)] + $fields) . "\n");
}
