// A RunReport built by hand for the reporter tests: the article's labs in miniature, with every
// kind of line a reporter prints (plain and CAS writes, a lock released too late, a failed publish
// and its retries, two orders, a session lab with an error step and a failing case, a skipped lab).
#pragma once

#include <string>
#include <vector>

#include "check/outcome.h"
#include "scenario/loader/loader.h"

namespace relab::test {

inline int64_t ms_ns(double ms) { return static_cast<int64_t>(ms * 1'000'000); }

inline nlohmann::json event(int64_t order, const std::string& type, int64_t v) {
    return {{"order", order}, {"type", type}, {"v", v}};
}

inline StreamEntry entry(const std::string& id, int64_t order, const std::string& type, int64_t v) {
    return StreamEntry{id, {{"order", std::to_string(order)}, {"type", type}, {"v", std::to_string(v)}}};
}

inline HistoryRecord rec(int trial, double t_ms, const std::string& actor, Op op,
                         nlohmann::json data) {
    return HistoryRecord{trial, ms_ns(t_ms), actor, op, std::move(data)};
}

inline HistoryRecord receive(int trial, double t_ms, const std::string& actor, const std::string& id,
                             nlohmann::json ev) {
    return rec(trial, t_ms, actor, Op::receive, {{"entry", id}, {"event", std::move(ev)}});
}

inline HistoryRecord plain_write(int trial, double t_ms, const std::string& actor, nlohmann::json ev,
                                 int64_t affected) {
    const std::string status = ev.at("type").get<std::string>();
    const int64_t order = ev.at("order").get<int64_t>();
    return rec(trial, t_ms, actor, Op::write,
               {{"event", ev},
                {"status", status},
                {"mode", "plain"},
                {"affected", affected},
                {"sql", "UPDATE tmp_orders SET status = '" + status + "' WHERE id = " + std::to_string(order)}});
}

inline HistoryRecord cas_write(int trial, double t_ms, const std::string& actor, nlohmann::json ev,
                               int64_t affected) {
    const std::string status = ev.at("type").get<std::string>();
    const int64_t v = ev.at("v").get<int64_t>();
    return rec(trial, t_ms, actor, Op::write,
               {{"event", ev},
                {"status", status},
                {"version", v},
                {"mode", "cas"},
                {"affected", affected},
                {"sql", "UPDATE tmp_orders SET status = '" + status + "', version = " + std::to_string(v) +
                            " WHERE id = 42 AND version < " + std::to_string(v)}});
}

inline HistoryRecord lock_acquire(int trial, double t_ms, const std::string& actor, int attempts, int64_t ttl_ms) {
    return rec(trial, t_ms, actor, Op::lock_acquire, {{"key", "lock:order:42"}, {"attempts", attempts}, {"ttl_ms", ttl_ms}});
}

inline HistoryRecord lock_release(int trial, double t_ms, const std::string& actor, int64_t result) {
    return rec(trial, t_ms, actor, Op::lock_release,
               {{"key", "lock:order:42"}, {"result", result}, {"method", "compare-and-delete Lua script"}});
}

inline OrderSpec order(int64_t id) {
    OrderSpec o;
    o.id = id;
    return o;
}

inline Expectation expect(Expectation::Count wrong, int n = 0) {
    Expectation e;
    e.wrong = wrong;
    e.n = n;
    return e;
}

// 08a: two trials, both wrong; the timeline of trial 1 is the article's section 2.
inline LabResult baseline_lab() {
    LabResult lab;
    Scenario& s = lab.scenario;
    s.id = "08a-baseline";
    s.part = "baseline";
    s.output = "08a-baseline";
    s.title = "BUG: 2 parallel consumers; plain UPDATE";
    s.title_vi = "BUG: 2 consumer song song; UPDATE thường";
    s.runs = 2;
    s.seed = 8001;
    s.flow().orders = {order(42)};
    s.expect = expect(Expectation::Count::all);
    s.documented.text = "wrong 10/10; created overwrites at 816 ms";
    s.documented.text_vi = "sai 10/10; created ghi đè ở 816 ms";
    s.documented.article = Article::ordering;
    s.documented.section = "§2";
    s.documented.quote_vi = "10/10 lần đơn #42 kết thúc ở created.";
    s.documented.wrong = 10;
    s.documented.of = 10;
    s.source = {{"id", "08a-baseline"}, {"runs", 2}, {"consumers", 2}};

    for (int trial = 1; trial <= 2; ++trial) {
        TrialOutcome t;
        t.trial = trial;
        t.seed = 1000 + trial;
        const std::string created_id = trial == 1 ? "1792591449272-0" : "1792591450391-0";
        const std::string paid_id = trial == 1 ? "1792591449272-1" : "1792591450391-1";
        t.stream = {entry(created_id, 42, "created", 1), entry(paid_id, 42, "paid", 2)};
        t.history = {
            rec(trial, 0, "producer", Op::start, nlohmann::json::object()),
            rec(trial, 0.4, "producer", Op::publish,
                {{"event", event(42, "created", 1)}, {"attempt", 1}, {"result", "ok"}, {"entry", created_id}}),
            rec(trial, 0.4, "producer", Op::publish,
                {{"event", event(42, "paid", 2)}, {"attempt", 1}, {"result", "ok"}, {"entry", paid_id}}),
            receive(trial, 2.1, "C1", created_id, event(42, "created", 1)),
            receive(trial, 2.3, "C2", paid_id, event(42, "paid", 2)),
            plain_write(trial, trial == 1 ? 111.9 : 104.0, "C2", event(42, "paid", 2), 1),
            rec(trial, 112.0, "C2", Op::ack, {{"entry", paid_id}}),
            plain_write(trial, trial == 1 ? 816.999 : 809.5, "C1", event(42, "created", 1), 1),
            rec(trial, 817.0, "C1", Op::ack, {{"entry", created_id}}),
        };
        t.final_rows = {OrderRow{42, "created", 0}};
        t.wrong = true;
        t.wrong_orders = {"#42=created (expected paid)"};
        t.accounting = account(t.history);  // 2 published, 2 processed once, 1 stale overwrite
        lab.trials.push_back(std::move(t));
    }
    lab.wrong = 2;
    lab.total = 2;
    lab.held = true;
    lab.delivery = LatencyStats{4, 210, 480};
    lab.elapsed_s = 2.5;
    return lab;
}

// 08c: three trials; trial 1 right, trial 2 wrong with a release that came too late, trial 3 wrong.
inline LabResult lock_lab() {
    LabResult lab;
    Scenario& s = lab.scenario;
    s.id = "08c-s4a";
    s.output = "08c-lock";
    s.title = "S4a: 2 consumers + lock per key";
    s.title_vi = "S4a: 2 consumer + lock theo khoá";
    s.runs = 3;
    s.seed = 8031;
    s.flow().orders = {order(42)};
    s.flow().lock.enabled = true;
    s.flow().lock.ttl_ms = 500;
    s.expect = expect(Expectation::Count::at_least, 1);
    s.documented.text = "the late release returns 0";
    s.documented.text_vi = "lần nhả lock muộn trả 0";
    s.documented.article = Article::ordering;
    s.documented.section = "§3, S4c";
    s.documented.quote_vi = "DELEX … IFEQ trả 0";
    s.documented.also = {{"lock là mutual exclusion (loại trừ lẫn nhau), không phải ordering (sắp thứ tự).", "§3, S4",
                          "lock-fifo puts a per-key FIFO behind the lock", "lock-fifo đặt FIFO theo khoá sau lock"}};

    TrialOutcome t1;
    t1.trial = 1;
    t1.stream = {entry("1792591473321-0", 42, "created", 1), entry("1792591473321-1", 42, "paid", 2)};
    t1.history = {
        receive(1, 1.2, "C1", "1792591473321-0", event(42, "created", 1)),
        receive(1, 1.5, "C2", "1792591473321-1", event(42, "paid", 2)),
        lock_acquire(1, 1.9, "C1", 1, 500),
        plain_write(1, 814.0, "C1", event(42, "created", 1), 1),
        lock_release(1, 820.0, "C1", 1),
        lock_acquire(1, 827.0, "C2", 41, 500),
        plain_write(1, 897.0, "C2", event(42, "paid", 2), 1),
        lock_release(1, 898.0, "C2", 1),
    };
    t1.final_rows = {OrderRow{42, "paid", 0}};

    TrialOutcome t2;
    t2.trial = 2;
    t2.stream = {entry("1792591525929-0", 42, "created", 1), entry("1792591525929-1", 42, "paid", 2)};
    t2.history = {
        receive(2, 1.0, "C2", "1792591525929-1", event(42, "paid", 2)),
        receive(2, 1.1, "C1", "1792591525929-0", event(42, "created", 1)),
        lock_acquire(2, 3.0, "C1", 1, 500),
        lock_acquire(2, 510.0, "C2", 21, 500),
        plain_write(2, 567.0, "C2", event(42, "paid", 2), 1),
        lock_release(2, 568.0, "C2", 1),
        plain_write(2, 810.0, "C1", event(42, "created", 1), 1),
        lock_release(2, 810.5, "C1", 0),
    };
    t2.final_rows = {OrderRow{42, "created", 0}};
    t2.wrong = true;

    TrialOutcome t3;
    t3.trial = 3;
    t3.stream = {entry("1792591530001-0", 42, "created", 1), entry("1792591530001-1", 42, "paid", 2)};
    t3.history = {receive(3, 2.0, "C1", "1792591530001-1", event(42, "paid", 2))};
    t3.final_rows = {OrderRow{42, "created", 0}};
    t3.wrong = true;

    lab.trials = {t1, t2, t3};
    lab.wrong = 2;
    lab.total = 3;
    lab.held = true;
    lab.lock_release_method = "compare-and-delete Lua script";
    return lab;
}

// 08f: the producer's publish of created fails twice; the consumer's CAS skips the late created.
inline LabResult cas_lab() {
    LabResult lab;
    Scenario& s = lab.scenario;
    s.id = "08f-p2";
    s.output = "08f-p2";
    s.title = "P2 right: CAS with the BUSINESS version";
    s.title_vi = "P2 đúng: CAS với version NGHIỆP VỤ";
    s.runs = 1;
    s.seed = 8061;
    s.flow().consumers = 1;
    s.flow().orders = {order(42)};
    s.flow().write.mode = WriteMode::cas;
    s.expect = expect(Expectation::Count::none);
    s.documented.text = "wrong 0/5";
    s.documented.text_vi = "sai 0/5";
    s.documented.wrong = 0;
    s.documented.of = 5;

    TrialOutcome t;
    t.trial = 1;
    t.stream = {entry("1792591566859-0", 42, "paid", 2), entry("1792591567558-0", 42, "created", 1)};
    t.history = {
        rec(1, 0, "producer", Op::start, nlohmann::json::object()),
        rec(1, 0.3, "producer", Op::publish,
            {{"event", event(42, "created", 1)}, {"attempt", 1}, {"result", "fail"}, {"retry_in_ms", 500}}),
        rec(1, 301.2, "producer", Op::publish,
            {{"event", event(42, "paid", 2)}, {"attempt", 1}, {"result", "ok"}, {"entry", "1792591566859-0"}}),
        receive(1, 301.5, "C1", "1792591566859-0", event(42, "paid", 2)),
        cas_write(1, 360.0, "C1", event(42, "paid", 2), 1),
        rec(1, 501.0, "producer", Op::publish,
            {{"event", event(42, "created", 1)}, {"attempt", 2}, {"result", "fail"}, {"retry_in_ms", 500}}),
        rec(1, 1000.4, "producer", Op::publish,
            {{"event", event(42, "created", 1)}, {"attempt", 3}, {"result", "ok"}, {"entry", "1792591567558-0"}}),
        receive(1, 1000.6, "C1", "1792591567558-0", event(42, "created", 1)),
        cas_write(1, 1802.0, "C1", event(42, "created", 1), 0),
    };
    t.final_rows = {OrderRow{42, "paid", 2}};
    t.accounting = account(t.history);  // 2 published, 2 processed once (created's CAS refused)
    lab.trials = {t};
    lab.wrong = 0;
    lab.total = 1;
    lab.held = true;
    return lab;
}

// 08g: two orders; trial 1 leaves #42 wrong, trial 2 is right. No documented result.
inline LabResult two_orders_lab() {
    LabResult lab;
    Scenario& s = lab.scenario;
    s.id = "08g-p1-naive";
    s.output = "08g-outbox";
    s.title = "P1 wrong: naive dispatcher";
    s.title_vi = "P1 sai: dispatcher NGÂY THƠ";
    s.runs = 2;
    s.flow().orders = {order(42), order(43)};
    s.expect = expect(Expectation::Count::at_least, 1);

    TrialOutcome t1;
    t1.trial = 1;
    t1.stream = {entry("1792591588799-0", 43, "created", 1), entry("1792591588804-0", 42, "paid", 2)};
    t1.history = {
        receive(1, 30.0, "C1", "1792591588799-0", event(43, "created", 1)),
        plain_write(1, 35.0, "C1", event(43, "created", 1), 1),
    };
    t1.final_rows = {OrderRow{42, "created", 0}, OrderRow{43, "paid", 0}};
    t1.wrong = true;
    TrialOutcome t2;
    t2.trial = 2;
    t2.final_rows = {OrderRow{42, "paid", 0}, OrderRow{43, "paid", 0}};
    lab.trials = {t1, t2};
    lab.wrong = 1;
    lab.total = 2;
    lab.held = true;
    return lab;
}

inline HistoryRecord fault(int trial, double t_ms, int index, const std::string& phase, const std::string& action,
                           const std::string& target, const std::string& text) {
    nlohmann::json d = {{"phase", phase}, {"action", action}, {"target", target}, {"fault", index}, {"text", text}};
    return rec(trial, t_ms, "nemesis", Op::fault, std::move(d));
}

// A consumer killed mid-job: C1 writes paid, is killed (fault 1) before its ack, the reaper
// claims the entry and C2 processes it again (delivery 2); restarting C1 (fault 2) fails.
inline LabResult crash_lab() {
    LabResult lab;
    Scenario& s = lab.scenario;
    s.id = "08x-crash";
    s.output = "08x-crash";
    s.title = "a consumer killed before its ack";
    s.runs = 1;
    s.flow().orders = {order(42)};
    s.expect = expect(Expectation::Count::none);
    TrialOutcome t;
    t.trial = 1;
    t.stream = {entry("1790000000000-0", 42, "paid", 2)};
    t.history = {
        rec(1, 0, "producer", Op::start, nlohmann::json::object()),
        rec(1, 0.5, "producer", Op::publish,
            {{"event", event(42, "paid", 2)}, {"attempt", 1}, {"result", "ok"}, {"entry", "1790000000000-0"}}),
        rec(1, 1.0, "C1", Op::receive,
            {{"entry", "1790000000000-0"}, {"event", event(42, "paid", 2)}, {"deliveries", 1}, {"via", "new"}}),
        plain_write(1, 50.0, "C1", event(42, "paid", 2), 1),
        fault(1, 60.0, 1, "invoke", "kill", "C1", "SIGKILL C1 after its write, before its ack"),
        fault(1, 62.5, 1, "ok", "kill", "C1", "SIGKILL C1 after its write, before its ack"),
        rec(1, 400.0, "reaper", Op::claim,
            {{"claimed", {"1790000000000-0"}}, {"deleted", nlohmann::json::array()}, {"min_idle_ms", 300}}),
        rec(1, 400.5, "C2", Op::receive,
            {{"entry", "1790000000000-0"}, {"event", event(42, "paid", 2)}, {"deliveries", 2}, {"via", "claim"}}),
        plain_write(1, 450.0, "C2", event(42, "paid", 2), 1),
        rec(1, 451.0, "C2", Op::ack, {{"entry", "1790000000000-0"}}),
        fault(1, 500.0, 2, "invoke", "restart", "C1", "start C1 again"),
        rec(1, 501.0, "nemesis", Op::fault,
            {{"phase", "fail"}, {"action", "restart"}, {"target", "C1"}, {"fault", 2}, {"error", "exec failed"}}),
    };
    t.final_rows = {OrderRow{42, "paid", 2}};
    t.accounting = account(t.history);  // 1 published, duplicated once
    lab.trials = {t};
    lab.total = 1;
    lab.held = true;
    return lab;
}

inline SessionStep step(const std::string& sql, int64_t at_ms = -1) {
    SessionStep st;
    st.sql = sql;
    st.at_ms = at_ms;
    return st;
}

inline StepOutcome ran(const std::string& session, const std::string& sql, int64_t start_us, int64_t duration_us,
                       const std::string& tag) {
    StepOutcome o;
    o.session = session;
    o.sql = sql;
    o.start_us = start_us;
    o.duration_us = duration_us;
    o.tag = tag;
    return o;
}

inline const std::string k_cas_paid = "UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2";
inline const std::string k_cas_created =
    "UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1";

// 08d: case 1 has two sessions and B's UPDATE fails with a serialization error as expected; case
// 2 is one session whose second UPDATE did not do what was expected, so the case is wrong.
inline LabResult session_lab() {
    LabResult lab;
    Scenario& s = lab.scenario;
    s.id = "08d-cas-overlap";
    s.output = "08d-cas";
    s.title = "CAS when 2 UPDATEs OVERLAP";
    s.title_vi = "CAS khi 2 UPDATE chạy CHỒNG nhau";
    s.set_kind(LabKind::sessions);
    s.expect = expect(Expectation::Count::none);
    s.documented.text = "B fails 'could not serialize access due to concurrent update'";
    s.documented.text_vi = "B lỗi could not serialize access due to concurrent update";

    SessionCase c1;
    c1.title = "A = paid v=2, B = created v=1 in REPEATABLE READ";
    c1.title_vi = "A = paid v=2, B = created v=1 ở REPEATABLE READ";
    SessionSpec a{"A", {step("BEGIN", 0), step(k_cas_paid), step("COMMIT", 1000)}};
    SessionStep b_update = step(k_cas_created);
    b_update.expect_sqlstate = "40001";
    b_update.expect_wait_min_ms = 500;
    b_update.expect_wait_max_ms = 900;
    SessionSpec b{"B", {step("BEGIN ISOLATION LEVEL REPEATABLE READ", 300), b_update, step("ROLLBACK")}};
    c1.sessions = {a, b};
    c1.expect_rows = {{"42", "paid", "2"}};

    SessionCase c2;
    c2.title = "CAS by hand: paid (v=2) first, created (v=1) late";
    c2.title_vi = "Câu CAS chạy tay: paid (v=2) tới trước, created (v=1) tới muộn";
    c2.sessions = {SessionSpec{"A", {step(k_cas_paid), step(k_cas_created), step("SELECT id, status, version FROM tmp_orders")}}};
    c2.expect_rows = {{"42", "paid", "2"}};
    s.sessions().cases = {c1, c2};

    CaseOutcome o1;
    o1.title = c1.title;
    o1.title_vi = c1.title_vi;
    StepOutcome serialization = ran("B", k_cas_created, 300'400, 703'011, "");
    serialization.sqlstate = "40001";
    serialization.error = "could not serialize access due to concurrent update";
    o1.steps = {ran("A", "BEGIN", 100, 50, "BEGIN"),
                ran("A", k_cas_paid, 200, 900, "UPDATE 1"),
                ran("B", "BEGIN ISOLATION LEVEL REPEATABLE READ", 300'100, 60, "BEGIN"),
                serialization,
                ran("A", "COMMIT", 1'000'200, 800, "COMMIT"),
                ran("B", "ROLLBACK", 1'003'500, 200, "ROLLBACK")};
    o1.columns = {"id", "status", "version"};
    o1.final_rows = {{"42", "paid", "2"}};

    CaseOutcome o2;
    o2.title = c2.title;
    o2.title_vi = c2.title_vi;
    StepOutcome unexpected = ran("A", k_cas_created, 2'000, 700, "UPDATE 1");
    unexpected.ok = false;
    unexpected.failure = "expected UPDATE 0, got UPDATE 1";
    StepOutcome select = ran("A", "SELECT id, status, version FROM tmp_orders", 3'000, 400, "SELECT 1");
    select.columns = {"id", "status", "version"};
    select.rows = {{"42", "created", "1"}};
    o2.steps = {ran("A", k_cas_paid, 1'000, 800, "UPDATE 1"), unexpected, select};
    o2.columns = {"id", "status", "version"};
    o2.final_rows = {{"42", "created", "1"}};
    o2.wrong = true;
    o2.failures = {"expected UPDATE 0, got UPDATE 1", "final rows [42, created, 1], expected [42, paid, 2]"};

    lab.cases = {o1, o2};
    lab.wrong = 1;
    lab.total = 2;
    lab.held = false;
    lab.failures = {"1 of 2 cases ended with wrong rows (expected none)"};
    return lab;
}

inline LabResult skipped_lab() {
    LabResult lab;
    lab.scenario.id = "08h-idmp";
    lab.scenario.output = "08h-idmp";
    lab.scenario.title = "XADD IDMP producer idempotency";
    lab.scenario.title_vi = "IDMP chống producer ghi trùng";
    lab.skipped = true;
    lab.skip_reason = "XADD IDMP needs Redis 8.6; this server is 7.0.15";
    return lab;
}

// 08c-s4a on the simulator: 150 trials, every fifth one wrong (30/150 = 20.0 %, Wilson 95 % CI
// 14.4–27.1 %); only trial 1 and the first wrong trial (5) keep their history, as a long simulated
// run does. Seeds are 0x5eed0000000000NN for trial NN.
inline LabResult sim_lab() {
    LabResult lab = lock_lab();
    lab.backend = "sim";
    lab.scenario.runs = 150;
    const TrialOutcome right = lab.trials[0], wrong = lab.trials[1];
    lab.trials.clear();
    for (int i = 1; i <= 150; ++i) {
        TrialOutcome t = i % 5 == 0 ? wrong : right;
        t.trial = i;
        t.seed = 0x5eed000000000000ULL + static_cast<uint64_t>(i);
        if (i != 1 && i != 5) t.history.clear();
        for (auto& r : t.history) r.trial = i;
        lab.trials.push_back(std::move(t));
    }
    lab.wrong = 30;
    lab.total = 150;
    lab.held = true;
    lab.wrong_rate = 0.2;
    lab.wrong_rate_low = 0.14384081582284963;
    lab.wrong_rate_high = 0.27114133079799635;
    for (int i : {5, 10, 15, 20, 25}) lab.failing_seeds.push_back(0x5eed000000000000ULL + static_cast<uint64_t>(i));
    return lab;
}

// A session lab the simulator does not run.
inline LabResult sim_skipped_lab() {
    LabResult lab;
    lab.scenario = session_lab().scenario;
    lab.backend = "sim";
    lab.skipped = true;
    lab.skip_reason = "scripted sessions run on the real backend only (the simulator runs workload labs)";
    return lab;
}

inline nlohmann::json idem_send(const std::string& request, int64_t user, const std::string& payload) {
    return {{"request", request}, {"attempt", 1}, {"user_id", user}, {"client_key", "8f3a"}, {"payload", payload}};
}

inline nlohmann::json idem_answer(const std::string& request, int64_t user, int code, int64_t order,
                                  const std::string& source) {
    return {{"request", request}, {"attempt", 1},   {"user_id", user}, {"code", code},
            {"body", "{\"order_id\":" + std::to_string(order) + "}"}, {"source", source}};
}

// An idempotency workload (article 002) in miniature. Trial 1 is wrong twice over: client A sends
// two payloads under one key and the hash in the key name makes the second a new key, so order 2
// duplicates order 1 (both user 7, idem key 7:8f3a); user 9 then replays A's key and is served
// order 1, a leak. The runner floods the cache in between. Trial 2 is right, but client B is
// killed before its answer.
// The scenario is parsed from its source, as `relab report` re-reads it from a saved report.
inline LabResult idem_lab() {
    LabResult lab;
    lab.scenario = parse_scenario(R"json({
      "id": "idem-key-hash-in-key", "output": "idem-keys", "kind": "workload", "runs": 2,
      "title": "Key design, wrong: the hash in the key name",
      "idem": {
        "middleware": { "key_format": "idem:v1:{user_id}:{client_key}:{hash}" },
        "clients": [
          { "name": "A", "requests": [ { "user_id": 7, "client_key": "8f3a", "payload": "{\"qty\":1}", "at_ms": 0 },
                                       { "user_id": 7, "client_key": "8f3a", "payload": "{\"qty\":2}", "at_ms": 300 } ] },
          { "name": "U9", "requests": [ { "user_id": 9, "client_key": "8f3a", "at_ms": 400 } ] },
          { "name": "B", "requests": [ { "user_id": 8, "client_key": "8f3a", "at_ms": 60 } ] }
        ],
        "scaling": "1 s here stands for 60 s"
      },
      "expect": { "wrong": { "at_least": 1 } },
      "documented": { "text": "the business logic runs twice: a silent duplicate order" }
    })json",
                                  "report fixture idem_lab");

    TrialOutcome t1;
    t1.trial = 1;
    t1.seed = 9001;
    t1.history = {
        rec(1, 0, "relab", Op::start, nlohmann::json::object()),
        rec(1, 0.1, "A", Op::send, idem_send("A#1", 7, "{\"qty\":1}")),
        rec(1, 0.3, "A", Op::claim, {{"key", "idem:v1:7:8f3a:h1"}, {"ttl_ms", 60000}, {"previous", nullptr}, {"decision", "first"}}),
        rec(1, 50.5, "A", Op::order, {{"idem_key", "7:8f3a"}, {"order_id", 1}}),
        rec(1, 50.7, "A", Op::store, {{"key", "idem:v1:7:8f3a:h1"}, {"ttl_ms", 86400000}, {"written", true}}),
        rec(1, 50.8, "A", Op::answer, idem_answer("A#1", 7, 201, 1, "created")),
        rec(1, 120, "relab", Op::fault, {{"type", "flood"}, {"text", "8 MB of cache keys written: evicted_keys 6,300"}}),
        rec(1, 300.1, "A", Op::send, idem_send("A#2", 7, "{\"qty\":2}")),
        rec(1, 300.3, "A", Op::claim, {{"key", "idem:v1:7:8f3a:h2"}, {"ttl_ms", 60000}, {"previous", nullptr}, {"decision", "first"}}),
        rec(1, 351.0, "A", Op::order, {{"idem_key", "7:8f3a"}, {"order_id", 2}}),
        rec(1, 351.3, "A", Op::answer, idem_answer("A#2", 7, 201, 2, "created")),
        rec(1, 400.0, "U9", Op::send, idem_send("U9#1", 9, "{\"qty\":1}")),
        rec(1, 400.2, "U9", Op::claim, {{"key", "idem:8f3a"}, {"ttl_ms", 60000}, {"previous", "{\"status\":\"done\"}"}, {"decision", "replay"}}),
        rec(1, 400.3, "U9", Op::answer, idem_answer("U9#1", 9, 201, 1, "replay")),
    };
    t1.idem.counts = IdemCounts{3, 2, 1, 2, 1, 0, 0, 0, 0, 1, 0};
    t1.idem.orders = {PlacedOrder{1, 7, "7:8f3a", "{\"qty\":1}"}, PlacedOrder{2, 7, "7:8f3a", "{\"qty\":2}"}};
    t1.idem.leak_examples = {"user 9 was served order 1 of user 7"};
    t1.wrong = true;

    TrialOutcome t2;
    t2.trial = 2;
    t2.seed = 9002;
    t2.history = {
        rec(2, 0, "relab", Op::start, nlohmann::json::object()),
        rec(2, 0.1, "A", Op::send, idem_send("A#1", 7, "{\"qty\":1}")),
        rec(2, 50.5, "A", Op::order, {{"idem_key", "7:8f3a"}, {"order_id", 1}}),
        rec(2, 50.8, "A", Op::answer, idem_answer("A#1", 7, 201, 1, "created")),
        rec(2, 60.0, "B", Op::send, idem_send("B#1", 8, "{\"qty\":1}")),
        rec(2, 60.2, "B", Op::claim, {{"key", "idem:v1:8:8f3a"}, {"ttl_ms", 60000}, {"previous", nullptr}, {"decision", "first"}}),
        rec(2, 61.0, "relab", Op::fault, {{"type", "kill_client"}, {"text", "B killed (SIGKILL) right after its claim"}}),
        rec(2, 90.0, "A", Op::send, idem_send("A#2", 7, "{\"qty\":1}")),
        rec(2, 90.4, "A", Op::answer,
            {{"request", "A#2"}, {"attempt", 1}, {"user_id", 7}, {"code", 409}, {"body", "{\"error\":\"in progress\"}"},
             {"source", "in_progress"}}),
    };
    t2.idem.counts = IdemCounts{3, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1};
    t2.idem.orders = {PlacedOrder{1, 7, "7:8f3a", "{\"qty\":1}"}};

    lab.trials = {t1, t2};
    lab.wrong = 1;
    lab.total = 2;
    lab.held = true;
    lab.measurements = {
        Measurement{"evicted_keys after the flood (allkeys-lru)", "6,300", "72,232 (the article's flood)",
                    "the count follows the flood's size: relab writes 8 MB into 3 MB"},
        Measurement{"OOM errors of the flood's writes", "0", "", ""},
    };
    return lab;
}

inline StepOutcome redis_ran(const std::string& sql, int64_t start_us, const std::string& tag) {
    StepOutcome o = ran("redis", sql, start_us, 150, tag);
    o.redis = true;
    return o;
}

// A scripted Redis lab like idem-memory: the article's MEMORY USAGE beside this server's, projected
// to 10,000 keys; the last step's reply is not the expected one, so the case and the lab broke.
inline LabResult idem_session_lab() {
    LabResult lab;
    lab.scenario = parse_scenario(R"json({
      "id": "idem-memory", "output": "idem-memory", "kind": "sessions",
      "title": "Memory: MEMORY USAGE of a done key",
      "cases": [ { "title": "the article's done key", "sessions": [ { "name": "redis", "client": "redis", "steps": [
        { "redis": ["SET", "idem:v1:7:k1", "{\"status\":\"done\"}", "EX", "86400"], "expect_reply": "OK" },
        { "redis": ["MEMORY", "USAGE", "idem:v1:7:k1"], "expect_integer": { "min": 100, "max": 400 },
          "documented": "192 (Redis 8.8)",
          "project": { "keys": 10000, "label": "10,000 orders/day", "documented": "≈ 2 MB" },
          "note": "Redis 7.0 allocates the key, the value and the expiry separately" },
        { "redis": ["TTL", "idem:v1:7:k1"], "expect_reply": "(integer) 59", "documented": "59" } ] } ] } ],
      "expect": { "wrong": "none" },
      "documented": { "text": "192 bytes/key; 10,000 orders/day ≈ 2 MB" }
    })json",
                                  "report fixture idem_session_lab");

    CaseOutcome o;
    o.title = lab.scenario.sessions().cases[0].title;
    StepOutcome bad_ttl = redis_ran("TTL idem:v1:7:k1", 1'500, "(integer) 60");
    bad_ttl.ok = false;
    bad_ttl.failure = "expected (integer) 59, got (integer) 60";
    o.steps = {redis_ran("SET idem:v1:7:k1 '{\"status\":\"done\"}' EX 86400", 1'000, "OK"),
               redis_ran("MEMORY USAGE idem:v1:7:k1", 1'200, "(integer) 200"), bad_ttl};
    o.wrong = true;
    o.failures = {"expected (integer) 59, got (integer) 60"};
    lab.cases = {o};
    lab.wrong = 1;
    lab.total = 1;
    lab.held = false;
    lab.failures = {"1 of 1 cases had a step with another reply (expected none)"};
    return lab;
}

// The simulator's labs and the idempotency labs, for the outputs that are new with them.
inline RunReport sim_and_idem_run() {
    RunReport run;
    run.relab_commit = "06a5a815b594";
    run.seed = 7;
    run.started_at = "2026-11-30T01:00:00Z";
    run.servers = ServerInfo{"7.0.15", "15.18", false, false, false, false};
    run.labs = {sim_lab(), sim_skipped_lab(), idem_lab(), idem_session_lab()};
    return run;
}

// S1 with the article's one figure for it, ~1.25 events/s, beside the throughput it measured.
inline LabResult s1_throughput_lab() {
    LabResult lab = baseline_lab();
    lab.scenario.id = "08b-s1";
    lab.scenario.flow().show_throughput = true;
    lab.throughput = ThroughputStats{2, 2, 851.5, 2.35, 2.3, 2.4};
    lab.scenario.documented.throughput =
        DocumentedThroughput{1.25, {"một consumer đơn chỉ đạt tối đa ~1,25 event/giây", "§2", "800 ms jobs", "job 800 ms"}};
    return lab;
}

// S2 with S1 run beside it on the same workload (`beside`): both throughputs and their ratio.
inline LabResult s2_beside_s1_lab() {
    LabResult lab = baseline_lab();
    lab.scenario.id = "s2-s1-same-workload";
    lab.scenario.flow().show_throughput = true;
    lab.throughput = ThroughputStats{2, 2, 400.0, 30.0, 29.0, 31.0};
    lab.beside_throughput = ThroughputStats{2, 2, 1200.0, 10.0, 9.5, 10.5};
    lab.beside_name = "S1";
    return lab;
}

inline RunReport sample_run() {
    RunReport run;
    run.relab_commit = "631b39ae6c30";
    run.seed = 20261021;
    run.started_at = "2026-11-29T20:52:59Z";
    run.servers = ServerInfo{"7.0.15", "15.8", false, true, false, false};
    run.labs = {baseline_lab(), lock_lab(), cas_lab(), two_orders_lab(), session_lab(), skipped_lab()};
    return run;
}

}  // namespace relab::test
