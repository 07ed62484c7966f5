// The idempotency middleware's decisions (claim / 409 / 422 / replay / release) and its flow over
// an in-memory Kv: no server.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <utility>

#include "history/file_history.h"
#include "roles/idem_middleware.h"
#include "roles/roles.h"

namespace relab {
namespace idem_middleware_test {

// SET with NX/XX/GET/EX/PX/KEEPTTL, GET and DEL on a map; time is whatever `now_ms` says.
class MapKv : public Kv {
public:
    struct Entry {
        std::string value;
        int64_t expires_ms = -1;  // -1: none
    };
    std::map<std::string, Entry> keys;
    int64_t now_ms = 0;
    std::vector<std::string> sets;  // "key NX GET EX 60000"-like log of every SET's options
    // The SET call (1-based, counted over the fixture's life) that throws this error instead.
    std::optional<std::pair<int, KvError>> fail_set;
    int set_calls = 0;
    int64_t replicas_acked = 1;

    bool set_nx_px(const std::string&, const std::string&, Millis) override { throw std::logic_error("unused"); }
    int64_t delete_if_equals(const std::string&, const std::string&) override { throw std::logic_error("unused"); }
    std::string delete_if_equals_method() const override { return "-"; }
    bool exists(const std::string& key) override { return live(key) != nullptr; }

    KvSetResult set(const std::string& key, const std::string& value, const KvSetOptions& o) override {
        if (fail_set && ++set_calls == fail_set->first) throw fail_set->second;
        std::string log = key;
        if (o.condition == KvSetOptions::Condition::nx) log += " NX";
        if (o.condition == KvSetOptions::Condition::xx) log += " XX";
        if (o.get) log += " GET";
        if (o.keepttl) log += " KEEPTTL";
        if (o.ttl.count() > 0) log += " PX " + std::to_string(o.ttl.count());
        sets.push_back(log);
        Entry* old = live(key);
        KvSetResult r;
        if (o.get && old) r.previous = old->value;
        if ((o.condition == KvSetOptions::Condition::nx && old) || (o.condition == KvSetOptions::Condition::xx && !old))
            return r;
        const int64_t expires = o.keepttl && old ? old->expires_ms : o.ttl.count() > 0 ? now_ms + o.ttl.count() : -1;
        keys[key] = Entry{value, expires};
        r.written = true;
        return r;
    }
    std::optional<std::string> get(const std::string& key) override {
        Entry* e = live(key);
        return e ? std::optional<std::string>(e->value) : std::nullopt;
    }
    int64_t del(const std::string& key) override { return live(key) ? static_cast<int64_t>(keys.erase(key)) : 0; }
    int64_t wait_replicas(int64_t, Millis) override { return replicas_acked; }

private:
    Entry* live(const std::string& key) {
        auto it = keys.find(key);
        if (it == keys.end()) return nullptr;
        if (it->second.expires_ms >= 0 && it->second.expires_ms <= now_ms) {
            keys.erase(it);
            return nullptr;
        }
        return &it->second;
    }
};

class ZeroClock : public Clock {
public:
    Nanos now() override { return Nanos{0}; }
    void sleep_for(Nanos) override {}
};

struct Fixture {
    MapKv kv;
    ZeroClock clock;
    MemoryHistory history;
    IdemMiddlewareSpec spec;
    StoreOutages outages = StoreOutages::none_scheduled;
    int business_runs = 0;

    IdemHttpResponse send(const IdemHttpRequest& req, const BusinessLogic& business = {}) {
        IdemMiddleware mw(kv, clock, history, "A", spec, outages);
        return mw.handle(req, spec.key_format, business ? business : [&] {
            ++business_runs;
            return IdemHttpResponse{201, "{\"order_id\":" + std::to_string(business_runs) + "}", "created"};
        });
    }
};

const IdemHttpRequest k_req{7, "8f3a", "{\"sku\":\"A1\",\"qty\":1}"};

TEST(IdemDecisionTest, no_old_value_means_this_request_is_first) {
    EXPECT_EQ(decide_claim(std::nullopt, "h", 7, false), ClaimDecision::first);
}

TEST(IdemDecisionTest, in_progress_with_the_same_hash_is_409_and_done_is_a_replay) {
    const std::string in_progress = state_json({"in_progress", "h", 0, "", std::nullopt});
    const std::string done = state_json({"done", "h", 201, "{\"order_id\":9}", std::nullopt});
    EXPECT_EQ(decide_claim(in_progress, "h", 7, false), ClaimDecision::in_progress);
    EXPECT_EQ(decide_claim(done, "h", 7, false), ClaimDecision::replay);
    const auto replay = answer_without_work(ClaimDecision::replay, parse_state(done));
    EXPECT_EQ(replay.code, 201);
    EXPECT_EQ(replay.body, "{\"order_id\":9}");
    EXPECT_EQ(answer_without_work(ClaimDecision::in_progress, parse_state(in_progress)).code, 409);
}

TEST(IdemDecisionTest, another_payload_is_422_even_while_the_first_is_in_progress) {
    EXPECT_EQ(decide_claim(state_json({"in_progress", "h1", 0, "", std::nullopt}), "h2", 7, false),
              ClaimDecision::mismatch);
    EXPECT_EQ(decide_claim(state_json({"done", "h1", 201, "{}", std::nullopt}), "h2", 7, false), ClaimDecision::mismatch);
    EXPECT_EQ(answer_without_work(ClaimDecision::mismatch, std::nullopt).code, 422);
}

TEST(IdemDecisionTest, owner_check_refuses_another_users_state_before_comparing_hashes) {
    const std::string done_for_7 = state_json({"done", "h", 201, "{\"order_id\":1}", 7});
    EXPECT_EQ(decide_claim(done_for_7, "h", 9, true), ClaimDecision::other_user);
    EXPECT_EQ(decide_claim(done_for_7, "h", 7, true), ClaimDecision::replay);
    // Without the check the same value is replayed to user 9: the leak of Case 2.
    EXPECT_EQ(decide_claim(done_for_7, "h", 9, false), ClaimDecision::replay);
}

TEST(IdemDecisionTest, a_value_in_another_format_is_unreadable_not_a_replay) {
    EXPECT_EQ(decide_claim("{\"state\":\"done\"}", "h", 7, false), ClaimDecision::unreadable);
    EXPECT_EQ(decide_claim("not json", "h", 7, false), ClaimDecision::unreadable);
    EXPECT_EQ(answer_without_work(ClaimDecision::unreadable, std::nullopt).code, 500);
}

TEST(IdemDecisionTest, value_json_keeps_the_articles_field_order) {
    EXPECT_EQ(state_json({"done", "a1b2c3d4e5f60718", 201, "{\"order_id\":90210}", std::nullopt}),
              R"({"status":"done","hash":"a1b2c3d4e5f60718","code":201,"body":"{\"order_id\":90210}"})");
}

TEST(IdemKeyTest, key_format_and_hash) {
    EXPECT_EQ(idem_key_for("idem:v1:{user_id}:{client_key}", 7, "8f3a", "h"), "idem:v1:7:8f3a");
    EXPECT_EQ(idem_key_for("idem:v1:{user_id}:{client_key}:{hash}", 7, "8f3a", "abc"), "idem:v1:7:8f3a:abc");
    // FNV-1a 64 of "x" and of "", computed outside relab.
    EXPECT_EQ(payload_hash("x"), "af63f54c86021707");
    EXPECT_EQ(payload_hash(""), "cbf29ce484222325");
    EXPECT_NE(payload_hash("{\"qty\":1}"), payload_hash("{\"qty\":2}"));
}

TEST(IdemMiddlewareTest, first_request_claims_with_nx_get_ex60_and_stores_done_with_xx_ex86400) {
    Fixture f;
    const auto r = f.send(k_req);
    EXPECT_EQ(r.code, 201);
    EXPECT_EQ(f.business_runs, 1);
    ASSERT_EQ(f.kv.sets.size(), 2u);
    EXPECT_EQ(f.kv.sets[0], "idem:v1:7:8f3a NX GET PX 60000");
    EXPECT_EQ(f.kv.sets[1], "idem:v1:7:8f3a XX PX 86400000");
    const auto stored = parse_state(*f.kv.get("idem:v1:7:8f3a"));
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->status, "done");
    EXPECT_EQ(stored->body, r.body);
    EXPECT_EQ(f.kv.keys["idem:v1:7:8f3a"].expires_ms, 86400000);
}

TEST(IdemMiddlewareTest, the_same_request_again_is_replayed_without_running_the_business_logic) {
    Fixture f;
    const auto first = f.send(k_req);
    const auto again = f.send(k_req);
    EXPECT_EQ(f.business_runs, 1);
    EXPECT_EQ(again.code, first.code);
    EXPECT_EQ(again.body, first.body);
    EXPECT_EQ(again.source, "replay");
}

TEST(IdemMiddlewareTest, a_request_while_the_first_runs_gets_409) {
    Fixture f;
    IdemHttpResponse inner;
    const auto outer = f.send(k_req, [&] {
        inner = f.send(k_req);  // the double click arrives during the business logic
        return IdemHttpResponse{201, "{\"order_id\":1}", "created"};
    });
    EXPECT_EQ(inner.code, 409);
    EXPECT_EQ(inner.source, "in_progress");
    EXPECT_EQ(outer.code, 201);
}

TEST(IdemMiddlewareTest, another_payload_under_the_same_key_gets_422_and_no_second_run) {
    Fixture f;
    f.send(k_req);
    const auto r = f.send({7, "8f3a", "{\"sku\":\"A1\",\"qty\":2}"});
    EXPECT_EQ(r.code, 422);
    EXPECT_EQ(f.business_runs, 1);
}

TEST(IdemMiddlewareTest, the_labs_business_failure_releases_the_key_so_the_retry_runs_the_business_logic) {
    Fixture f;
    const auto failed = f.send(k_req, []() -> IdemHttpResponse { throw BusinessLogicFailure("payment gateway down"); });
    EXPECT_EQ(failed.code, 500);
    EXPECT_EQ(failed.source, "error");
    EXPECT_FALSE(f.kv.exists("idem:v1:7:8f3a"));
    const auto retry = f.send(k_req);
    EXPECT_EQ(retry.code, 201);
    EXPECT_EQ(f.business_runs, 1);
    bool released = false;
    for (const auto& rec : f.history.records())
        if (rec.op == Op::release && rec.data.value("deleted", 0) == 1) released = true;
    EXPECT_TRUE(released);
}

TEST(IdemMiddlewareTest, layer4_refusal_is_409_and_releases_the_key) {
    Fixture f;
    const auto r = f.send(k_req, []() -> IdemHttpResponse { throw DuplicateOrderError("unique violation"); });
    EXPECT_EQ(r.code, 409);
    EXPECT_EQ(r.source, "layer4");
    EXPECT_FALSE(f.kv.exists("idem:v1:7:8f3a"));
}

TEST(IdemMiddlewareTest, one_tier_ttl_stores_with_keepttl) {
    Fixture f;
    f.spec.claim_ttl_ms = 86400000;
    f.spec.done_keepttl = true;
    f.kv.now_ms = 0;
    f.send(k_req);
    ASSERT_EQ(f.kv.sets.size(), 2u);
    EXPECT_EQ(f.kv.sets[1], "idem:v1:7:8f3a XX KEEPTTL");
    EXPECT_EQ(f.kv.keys["idem:v1:7:8f3a"].expires_ms, 86400000);
}

// The records of one op, in order.
std::vector<HistoryRecord> records_of(const MemoryHistory& h, Op op) {
    std::vector<HistoryRecord> out;
    for (const auto& r : h.records())
        if (r.op == op) out.push_back(r);
    return out;
}

const KvError k_oom(KvError::Kind::reply, "redis SET idem:v1:7:8f3a: OOM command not allowed when used memory > 'maxmemory'.");
const KvError k_lost(KvError::Kind::unavailable, "redis SET idem:v1:7:8f3a: server closed the connection");
const KvError k_garbled(KvError::Kind::unexpected, "redis SET idem:v1:7:8f3a: unexpected reply: (integer) 1");

TEST(IdemStoreErrorTest, an_error_reply_is_a_result_a_lost_connection_only_with_a_server_fault_a_garbled_reply_never) {
    EXPECT_TRUE(is_lab_result(k_oom, StoreOutages::none_scheduled));
    EXPECT_TRUE(is_lab_result(k_oom, StoreOutages::scheduled));
    EXPECT_FALSE(is_lab_result(k_lost, StoreOutages::none_scheduled));
    EXPECT_TRUE(is_lab_result(k_lost, StoreOutages::scheduled));
    EXPECT_FALSE(is_lab_result(k_garbled, StoreOutages::none_scheduled));
    EXPECT_FALSE(is_lab_result(k_garbled, StoreOutages::scheduled));
}

TEST(IdemStoreErrorTest, only_faults_that_take_the_stores_server_away_schedule_outages) {
    Scenario s;
    EXPECT_FALSE(redis_faults_scheduled(s));
    auto fault = [](FaultAction a, const std::string& target) {
        FaultSpec f;
        f.action = a;
        f.target = fault_target_named(target);
        return f;
    };
    for (auto a : {FaultAction::flood, FaultAction::snapshot, FaultAction::observe}) {
        s.faults = {fault(a, "redis"), fault(FaultAction::kill, "A")};
        EXPECT_FALSE(redis_faults_scheduled(s)) << to_string(a);
    }
    for (auto [a, target] : {std::pair{FaultAction::restart, "redis"}, std::pair{FaultAction::failover, "redis"},
                             std::pair{FaultAction::pause, "redis-replica"}}) {
        s.faults = {fault(FaultAction::flood, "redis"), fault(a, target)};
        EXPECT_TRUE(redis_faults_scheduled(s)) << to_string(a);
    }
}

TEST(IdemMiddlewareTest, an_error_reply_to_the_claim_fails_closed_with_503_and_never_runs_the_business_logic) {
    Fixture f;
    f.kv.fail_set = {{1, k_oom}};
    const auto r = f.send(k_req);
    EXPECT_EQ(r.code, 503);
    EXPECT_EQ(r.source, "unavailable");
    EXPECT_EQ(f.business_runs, 0);
    const auto claims = records_of(f.history, Op::claim);
    ASSERT_EQ(claims.size(), 1u);
    EXPECT_EQ(claims[0].data.value("error_class", ""), "reply");
    EXPECT_NE(claims[0].data.value("error", "").find("OOM command not allowed"), std::string::npos);
}

TEST(IdemMiddlewareTest, a_lost_connection_while_a_server_fault_is_scheduled_fails_closed_with_503) {
    Fixture f;
    f.outages = StoreOutages::scheduled;
    f.kv.fail_set = {{1, k_lost}};
    const auto r = f.send(k_req);
    EXPECT_EQ(r.code, 503);
    EXPECT_EQ(f.business_runs, 0);
    EXPECT_EQ(records_of(f.history, Op::claim).at(0).data.value("error_class", ""), "unavailable");
}

TEST(IdemMiddlewareTest, a_lost_connection_with_no_server_fault_scheduled_is_a_harness_error_not_an_answer) {
    Fixture f;
    f.kv.fail_set = {{1, k_lost}};
    try {
        f.send(k_req);
        FAIL() << "a lost connection no fault explains was answered";
    } catch (const HarnessError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("no fault of the lab explains it"), std::string::npos) << what;
        EXPECT_NE(what.find("server closed the connection"), std::string::npos) << what;
        EXPECT_NE(what.find("check that redis-server is running"), std::string::npos) << what;
    }
    EXPECT_EQ(f.business_runs, 0);
    EXPECT_TRUE(records_of(f.history, Op::answer).empty());
}

TEST(IdemMiddlewareTest, a_reply_relab_cannot_read_is_a_harness_error_even_during_a_server_fault) {
    Fixture f;
    f.outages = StoreOutages::scheduled;
    f.kv.fail_set = {{1, k_garbled}};
    EXPECT_THROW(f.send(k_req), HarnessError);
    EXPECT_EQ(f.business_runs, 0);
}

TEST(IdemMiddlewareTest, a_lost_connection_at_the_store_is_500_during_a_server_fault_and_a_harness_error_otherwise) {
    Fixture during;
    during.outages = StoreOutages::scheduled;
    during.kv.fail_set = {{2, k_lost}};  // the claim goes through, the store does not
    const auto r = during.send(k_req);
    EXPECT_EQ(r.code, 500);
    EXPECT_EQ(r.source, "store_failed");
    EXPECT_EQ(during.business_runs, 1);
    EXPECT_EQ(records_of(during.history, Op::store).at(0).data.value("error_class", ""), "unavailable");

    Fixture without;
    without.kv.fail_set = {{2, k_lost}};
    EXPECT_THROW(without.send(k_req), HarnessError);
}

TEST(IdemMiddlewareTest, a_postgresql_error_in_the_business_logic_is_a_harness_error_not_a_500) {
    Fixture f;
    try {
        f.send(k_req, []() -> IdemHttpResponse {
            throw std::runtime_error("INSERT INTO orders ...: server closed the connection unexpectedly");
        });
        FAIL() << "a PostgreSQL failure was answered";
    } catch (const HarnessError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("business logic (INSERT INTO orders)"), std::string::npos) << what;
        EXPECT_NE(what.find("server closed the connection unexpectedly"), std::string::npos) << what;
        EXPECT_NE(what.find("check that PostgreSQL is running"), std::string::npos) << what;
    }
    EXPECT_TRUE(records_of(f.history, Op::release).empty());
}

TEST(IdemMiddlewareTest, wait_fail_closed_releases_an_unreplicated_claim) {
    Fixture f;
    f.spec.wait = IdemWait{.replicas = 1, .fail_closed = true};
    f.kv.replicas_acked = 0;
    const auto r = f.send(k_req);
    EXPECT_EQ(r.code, 503);
    EXPECT_EQ(r.source, "not_replicated");
    EXPECT_EQ(f.business_runs, 0);
    EXPECT_FALSE(f.kv.exists("idem:v1:7:8f3a"));
    f.kv.replicas_acked = 1;
    EXPECT_EQ(f.send(k_req).code, 201);
}

TEST(IdemMiddlewareTest, a_stuck_claim_answers_409_until_its_ttl_then_the_retry_is_first) {
    Fixture f;
    f.spec.claim_ttl_ms = 1000;
    // The first process claimed and died: its in_progress value is all that is left.
    f.kv.set("idem:v1:7:8f3a", state_json({"in_progress", payload_hash(k_req.body), 0, "", std::nullopt}),
             KvSetOptions{KvSetOptions::Condition::nx, Millis{1000}, false, true});
    f.kv.now_ms = 999;
    EXPECT_EQ(f.send(k_req).code, 409);
    f.kv.now_ms = 1000;
    EXPECT_EQ(f.send(k_req).code, 201);
}

}  // namespace idem_middleware_test
}  // namespace relab
