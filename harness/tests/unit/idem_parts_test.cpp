// The idempotency labs' pure parts: scenario loading, counting from orders and answers, the
// Redis session helpers, the benchmark tools' output, and the text report's transcript.
#include <gtest/gtest.h>

#include <sstream>

#include "check/idem_check.h"
#include "report/idem_facts.h"
#include "report/text/idem_text.h"
#include "report/text/redis_transcript.h"
#include "families/skip_reasons.h"
#include "families/redis_session.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {
namespace idem_parts_test {

using nlohmann::json;

json idem_doc() {
    return json::parse(R"({
      "id": "idem-x", "group": "idem", "part": "idem-x", "title": "t", "kind": "workload", "runs": 1,
      "idem": {
        "middleware": { "key_format": "idem:v1:{user_id}:{client_key}", "claim_ttl_ms": 1000, "work_ms": 5,
                        "wait": { "replicas": 1, "timeout_ms": 100, "fail_closed": true } },
        "layer4": true,
        "clients": [ { "name": "A", "requests": [ { "user_id": 7, "client_key": "k", "at_ms": [0, 500], "fail_attempts": [1] } ],
                       "retry": { "on": [409], "every_ms": 50, "max_attempts": 2 } },
                     { "name": "G", "generate": { "count": 3, "every_ms": 10, "resend_after_ms": [100], "user_id": 9 } } ]
      },
      "servers": { "redis": { "maxmemory": "3mb", "maxmemory-policy": "allkeys-lru" }, "replica": true },
      "faults": [ { "action": "failover", "target": "redis", "at_ms": 300 },
                  { "action": "flood", "target": "redis", "at_ms": 100, "bytes": 1000 },
                  { "action": "kill", "target": "A", "after": { "op": "claim", "actor": "A", "fields": { "decision": "first" } } } ],
      "expect": { "wrong": "none" } })");
}

std::string error_of(const json& doc) {
    try {
        parse_scenario(doc.dump(), "t.json");
    } catch (const ScenarioError& e) {
        return e.what();
    }
    return "";
}

TEST(IdemLoaderTest, an_idem_workload_loads_with_clients_generated_requests_and_the_shared_fault_vocabulary) {
    const Scenario s = parse_scenario(idem_doc().dump(), "t.json");
    EXPECT_EQ(s.group, "idem");
    ASSERT_EQ(s.kind, LabKind::idem_clients);
    EXPECT_TRUE(s.idem().layer4);
    EXPECT_EQ(s.idem().middleware.claim_ttl_ms, 1000);
    ASSERT_TRUE(s.idem().middleware.wait.has_value());
    EXPECT_TRUE(s.idem().middleware.wait->fail_closed);
    EXPECT_EQ(s.servers.redis_config.at("maxmemory"), "3mb");
    ASSERT_EQ(s.idem().clients.size(), 2u);
    EXPECT_EQ(s.idem().clients[0].requests[0].send_at_ms, (std::vector<int64_t>{0, 500}));
    EXPECT_EQ(s.idem().clients[0].retry.on_codes, (std::vector<int>{409}));
    // The generated requests stay a "generate" block in the struct, made into requests where they are sent.
    EXPECT_TRUE(s.idem().clients[1].requests.empty());
    const std::vector<IdemRequest> generated = idem_client_requests(s.idem().clients[1]);
    ASSERT_EQ(generated.size(), 3u);
    EXPECT_EQ(generated[2].client_key, "G-3");
    EXPECT_EQ(generated[2].user_id, 9);
    EXPECT_EQ(generated[2].send_at_ms, (std::vector<int64_t>{20, 120}));
    ASSERT_EQ(s.faults.size(), 3u);
    EXPECT_EQ(s.faults[0].action, FaultAction::failover);  // in the file's order: triggers decide when
    EXPECT_EQ(s.faults[1].action, FaultAction::flood);
    EXPECT_EQ(s.faults[1].bytes, 1000);
    EXPECT_EQ(s.faults[2].action, FaultAction::kill);
    EXPECT_EQ(s.faults[2].target, Target::role("A"));
    ASSERT_TRUE(s.faults[2].trigger.after);
    EXPECT_EQ(s.faults[2].trigger.after->op, Op::claim);
}

TEST(IdemLoaderTest, the_articles_duplicate_count_is_read_for_the_report_and_must_be_text) {
    json doc = idem_doc();
    doc["idem"]["documented_duplicates"] = "5–10 around 20:00";
    doc["idem"]["documented_duplicates_note"] = "why";
    const Scenario s = parse_scenario(doc.dump(), "t.json");
    EXPECT_EQ(s.idem().documented_duplicates, "5–10 around 20:00");
    EXPECT_EQ(s.idem().documented_duplicates_note_vi, "why");  // falls back to the English note
    EXPECT_TRUE(parse_scenario(idem_doc().dump(), "t.json").idem().documented_duplicates.empty());
    doc["idem"]["documented_duplicates"] = 7;
    EXPECT_NE(error_of(doc).find("/idem/documented_duplicates"), std::string::npos) << error_of(doc);
}

TEST(IdemLoaderTest, server_faults_need_the_labs_own_servers_and_names_must_exist) {
    json doc = idem_doc();
    doc.erase("servers");
    EXPECT_NE(error_of(doc).find("/faults/0/target: a fault on \"redis\" needs the lab's own server"), std::string::npos)
        << error_of(doc);
    doc = idem_doc();
    doc["servers"]["replica"] = false;
    doc["faults"][0] = {{"action", "pause"}, {"target", "redis-replica"}, {"at_ms", 0}};
    EXPECT_NE(error_of(doc).find("needs a replica"), std::string::npos) << error_of(doc);
    doc = idem_doc();
    doc["faults"][2]["target"] = "Z";
    EXPECT_NE(error_of(doc).find("/faults/2/target"), std::string::npos) << error_of(doc);
    doc = idem_doc();
    doc["idem"]["faults"] = json::array();
    EXPECT_NE(error_of(doc).find("/idem/faults: moved to the top level"), std::string::npos) << error_of(doc);
    doc = idem_doc();
    doc["idem"]["middleware"]["key_format"] = "idem:{user_id}";
    EXPECT_NE(error_of(doc).find("containing {client_key}"), std::string::npos);
    doc = idem_doc();
    doc["idem"]["clients"][0]["requests"][0]["resend_after_fault"] = "nope";
    EXPECT_NE(error_of(doc).find("/idem/clients/0/requests/0: resend_after_fault names no fault"), std::string::npos)
        << error_of(doc);
    doc = idem_doc();
    doc["orders"] = json::array();
    EXPECT_NE(error_of(doc).find("/orders: does not apply to an idempotency workload"), std::string::npos);
}

// An idempotency lab holds no stream lab's data (Scenario::spec): a stream lab's section in its file
// is refused, not dropped, as the schema refuses it.
TEST(IdemLoaderTest, an_idem_lab_refuses_a_stream_labs_sections) {
    for (const char* key : {"buffer", "fanout", "shard", "generate", "sim", "show_throughput"}) {
        json doc = idem_doc();
        doc[key] = json::object();
        EXPECT_NE(error_of(doc).find(std::string("/") + key + ": does not apply to an idempotency workload"),
                  std::string::npos)
            << key << ": " << error_of(doc);
    }
    json doc = idem_doc();
    doc["beside"] = {{"name", "b"}, {"change", "c"}, {"patch", json::array()}};
    EXPECT_NE(error_of(doc).find("/beside: applies to stream labs"), std::string::npos) << error_of(doc);
    EXPECT_EQ(parse_scenario(idem_doc().dump(), "idem.json").flow_if(), nullptr);
}

TEST(IdemLoaderTest, a_redis_session_step_reads_its_command_and_expectations) {
    const json doc = json::parse(R"json({
      "id": "r", "title": "t", "kind": "sessions",
      "cases": [ { "title": "c", "exact_keys": true, "sessions": [ { "name": "A", "client": "redis", "steps": [
        { "redis": ["SET", "k", "v", "NX", "GET"], "expect_reply": "(nil)", "documented": "(nil)" },
        { "at_ms": 5, "redis": ["MEMORY", "USAGE", "k"], "expect_integer": { "min": 1, "max": 500 },
          "project": { "keys": 10000, "label": "per day" } } ] } ] } ],
      "expect": { "wrong": "none" } })json");
    const Scenario s = parse_scenario(doc.dump(), "t.json");
    const SessionCase& c = s.sessions().cases.at(0);
    EXPECT_TRUE(c.exact_keys);
    EXPECT_EQ(c.final_sql, "");  // Redis only: no table to show
    EXPECT_EQ(c.sessions.at(0).client, "redis");
    const auto& step = c.sessions.at(0).steps.at(1);
    ASSERT_TRUE(step.redis);
    EXPECT_EQ(step.at_ms, 5);
    EXPECT_EQ(step.redis->argv, (std::vector<std::string>{"MEMORY", "USAGE", "k"}));
    EXPECT_EQ(step.redis->expect_max, 500);
    ASSERT_TRUE(step.redis->project);
    EXPECT_EQ(step.redis->project->keys, 10000);

    json bad = doc;
    bad["cases"][0]["sessions"][0]["steps"][0]["expect_error"] = "WRONGTYPE";
    EXPECT_NE(error_of(bad).find("cannot both expect a reply and an error"), std::string::npos);

    // "via": "redis-cli" runs the step through the redis-cli binary; nothing else is accepted.
    EXPECT_FALSE(step.redis->via_redis_cli);
    json cli = doc;
    cli["cases"][0]["sessions"][0]["steps"][0]["via"] = "redis-cli";
    EXPECT_TRUE(parse_scenario(cli.dump(), "t.json").sessions().cases.at(0).sessions.at(0).steps.at(0).redis->via_redis_cli);
    cli["cases"][0]["sessions"][0]["steps"][0]["via"] = "phpredis";
    EXPECT_NE(error_of(cli).find("/cases/0/sessions/0/steps/0/via: unknown; the one value is \"redis-cli\""),
              std::string::npos)
        << error_of(cli);
}

HistoryRecord answer(const std::string& request, int64_t user, int attempt, int code, const std::string& body,
                     const std::string& source) {
    return HistoryRecord{1, 0, "A", Op::answer,
                         {{"request", request}, {"user_id", user}, {"attempt", attempt}, {"code", code}, {"body", body},
                          {"source", source}}};
}

HistoryRecord send(const std::string& request, int attempt) {
    return HistoryRecord{1, 0, "A", Op::send, {{"request", request}, {"attempt", attempt}}};
}

TEST(IdemCountTest, duplicates_come_from_the_orders_table_and_leaks_from_the_answers) {
    const std::vector<PlacedOrder> orders = {{1, 7, "7:k", "{}"}, {2, 7, "7:k", "{}"}, {3, 7, "7:k", "{}"},
                                             {4, 9, "9:k", "{}"}};
    const std::vector<HistoryRecord> history = {
        send("A#1", 1), answer("A#1", 7, 1, 201, "{\"order_id\":1}", "created"),
        send("B#1", 1), answer("B#1", 9, 1, 201, "{\"order_id\":1}", "replay"),   // user 9 got user 7's order
        send("A#2", 1), answer("A#2", 7, 1, 409, "{}", "in_progress"),
        send("A#3", 1), answer("A#3", 7, 1, 422, "{}", "mismatch"),
        send("A#4", 1), answer("A#4", 7, 1, 409, "{}", "layer4"),
        send("A#5", 1), answer("A#5", 7, 1, 503, "{}", "unavailable"),
        send("K#1", 1)};  // killed before it answered
    const IdemTrial t = count_idem_trial(history, orders);
    EXPECT_EQ(t.counts.orders, 4);
    EXPECT_EQ(t.counts.duplicates, 2);
    EXPECT_EQ(t.counts.created, 1);
    EXPECT_EQ(t.counts.replays, 1);
    EXPECT_EQ(t.counts.conflicts, 1);
    EXPECT_EQ(t.counts.mismatches, 1);
    EXPECT_EQ(t.counts.layer4, 1);
    EXPECT_EQ(t.counts.errors, 1);
    EXPECT_EQ(t.counts.leaks, 1);
    EXPECT_EQ(t.counts.sends, 7);
    EXPECT_EQ(t.counts.unanswered, 1);
    ASSERT_EQ(t.leak_examples.size(), 1u);
    EXPECT_NE(t.leak_examples[0].find("user 9"), std::string::npos);
}

TEST(RedisSessionHelpersTest, pads_expand_and_show_short) {
    EXPECT_EQ(expand_pads("a{pad:3}b"), "axxxb");
    EXPECT_EQ(expand_pads("{pad:0}"), "");
    EXPECT_EQ(display_arg("{\"body\":\"{pad:200000}\"}"), "'{\"body\":\"<200000 bytes of x>\"}'");
}

TEST(RedisSessionHelpersTest, arguments_are_quoted_like_a_shell_would_need) {
    EXPECT_EQ(display_command({"SET", "idem:demo:k1", "{\"status\":\"in_progress\"}", "NX", "GET", "EX", "60"}),
              "SET idem:demo:k1 '{\"status\":\"in_progress\"}' NX GET EX 60");
    EXPECT_EQ(display_arg("it's"), "'it'\\''s'");
    EXPECT_EQ(display_arg(""), "''");
}

TEST(RedisSessionHelpersTest, key_positions_match_getkeys_left_to_right) {
    EXPECT_EQ(key_positions({"SET", "k", "k"}, {"k"}), (std::vector<size_t>{1}));
    EXPECT_EQ(key_positions({"EVAL", "return 1", "2", "a", "b", "a"}, {"a", "b"}), (std::vector<size_t>{3, 4}));
    EXPECT_THROW(key_positions({"GET", "x"}, {"y"}), std::runtime_error);
}

TEST(RedisSessionHelpersTest, replies_are_checked_in_redis_cli_form) {
    RedisStep step;
    step.expect_reply = "(nil)";
    EXPECT_EQ(check_redis_reply(step, RedisReply{}), "");
    RedisReply value;
    value.type = RedisReply::Type::string;
    value.str = "{\"a\":1}";
    EXPECT_NE(check_redis_reply(step, value), "");
    step.expect_reply = "{\"a\":1}";  // a string reply by its value...
    EXPECT_EQ(check_redis_reply(step, value), "");
    step.expect_reply = "\"{\\\"a\\\":1}\"";  // ...or as redis-cli quotes it
    EXPECT_EQ(check_redis_reply(step, value), "");

    RedisStep err;
    err.expect_error = "WRONGTYPE";
    RedisReply e;
    e.type = RedisReply::Type::error;
    e.str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    EXPECT_EQ(check_redis_reply(err, e), "");
    EXPECT_NE(check_redis_reply(err, value), "");
    EXPECT_NE(check_redis_reply(RedisStep{}, e).find("unexpected error"), std::string::npos);

    RedisStep range;
    range.expect_min = 100;
    range.expect_max = 400;
    RedisReply n;
    n.type = RedisReply::Type::integer;
    n.integer = 200;
    EXPECT_EQ(check_redis_reply(range, n), "");
    n.integer = 401;
    EXPECT_NE(check_redis_reply(range, n), "");
}

TEST(RedisSessionHelpersTest, the_prefix_is_stripped_from_replies) {
    RedisReply r;
    r.type = RedisReply::Type::array;
    RedisReply k;
    k.type = RedisReply::Type::string;
    k.str = "relab:1:idem:a";
    r.elements = {k};
    EXPECT_EQ(without_prefix(r, "relab:1:").elements[0].str, "idem:a");
}

TEST(IdemSkipTest, labs_that_claim_with_set_nx_get_are_skipped_before_redis_7_with_the_reason) {
    const std::string dir = std::string(RELAB_SOURCE_DIR) + "/scenarios/";
    const Scenario race = load_scenario(dir + "idem-a-race.json");
    const Scenario lua = load_scenario(dir + "idem-c-lua.json");
    const Scenario middleware = load_scenario(dir + "idem-f-mw-double-click.json");
    const Scenario eviction = load_scenario(dir + "idem-p-eviction-lru.json");  // its own servers
    EXPECT_FALSE(nx_get_skip_reason(race, "7.0.15").has_value());
    ASSERT_TRUE(nx_get_skip_reason(race, "6.2.14").has_value());
    EXPECT_NE(nx_get_skip_reason(race, "6.2.14")->find("needs Redis 7.0; this server is 6.2.14"), std::string::npos);
    EXPECT_TRUE(nx_get_skip_reason(middleware, "6.2.14").has_value());
    EXPECT_FALSE(nx_get_skip_reason(lua, "6.2.14").has_value());
    EXPECT_FALSE(nx_get_skip_reason(eviction, "6.2.14").has_value());
}

TEST(IdemTextTest, a_redis_case_prints_like_redis_cli_with_the_articles_reply_and_projection) {
    SessionCase spec;
    spec.title = "memory";
    SessionSpec session;
    session.name = "redis";
    session.client = "redis";
    SessionStep step;
    RedisStep rs;
    rs.argv = {"MEMORY", "USAGE", "k"};
    rs.documented = "192";
    rs.project = MemoryProjection{10000, "10,000 orders/day", "", "≈ 2 MB"};
    step.redis = rs;
    session.steps = {step};
    spec.sessions = {session};
    CaseOutcome c;
    c.title = "memory";
    StepOutcome out;
    out.session = "redis";
    out.redis = true;
    out.sql = "MEMORY USAGE k";
    out.tag = "(integer) 200";
    c.steps = {out};
    std::ostringstream text;
    print_redis_case(c, spec, Lang::en, text);
    EXPECT_EQ(text.str(),
              "--- memory\n"
              "redis> MEMORY USAGE k\n"
              "(integer) 200      ← article: 192\n"
              "  × 10,000 (10,000 orders/day) = 2.0 MB      ← article: ≈ 2 MB\n");
    EXPECT_EQ(decimal_bytes(229480.0 * 10000), "2.3 GB");
}

TEST(IdemTextTest, a_lab_without_clients_prints_its_figures_but_no_request_counts) {
    LabResult lab;
    lab.scenario = parse_scenario(idem_doc().dump(), "t.json");
    lab.trials.push_back(TrialOutcome{});
    lab.measurements.push_back({"claim ops/s", "19253", "", "", "", ""});
    std::ostringstream with_clients;
    print_idem_workload(lab, Lang::en, TimelineSelection{}, with_clients);
    EXPECT_NE(with_clients.str().find("orders 0 (duplicates 0)"), std::string::npos) << with_clients.str();
    lab.scenario.set_kind(LabKind::idem_benchmark);  // the loader's kind for a lab with a benchmark and no clients
    lab.scenario.idem().clients.clear();
    std::ostringstream without;
    print_idem_workload(lab, Lang::en, TimelineSelection{}, without);
    EXPECT_EQ(without.str().find("orders "), std::string::npos) << without.str();
    EXPECT_NE(without.str().find("claim ops/s: 19253"), std::string::npos) << without.str();
}


}  // namespace idem_parts_test
}  // namespace relab

namespace relab {
namespace idem_parts_test {

HistoryRecord nemesis_ok(int64_t t_ms, int fault, nlohmann::json data) {
    data["fault"] = fault;
    data["phase"] = "ok";
    return HistoryRecord{1, t_ms * 1'000'000, "nemesis", Op::fault, std::move(data)};
}

// The figures beside the article's are read from the nemesis's records, so both backends report
// them alike: keys a restart lost, keys on the promoted replica, how long a killed client's key
// kept answering 409.
TEST(IdemFaultMeasurementsTest, each_fault_leaves_its_figure_beside_the_articles) {
    Scenario s;
    s.faults.resize(3);
    s.faults[0].action = FaultAction::restart;
    s.faults[0].target = Target::of(FaultTarget::redis);
    s.faults[0].documented = "the last 60 s";
    s.faults[1].action = FaultAction::failover;
    s.faults[2].action = FaultAction::kill;
    s.faults[2].target = Target::role("A");
    s.faults[2].documented = "stuck for 24 h";
    std::vector<HistoryRecord> h = {
        nemesis_ok(900, 1, {{"action", "restart"}, {"target", "redis"}, {"persistence", "appendonly no"},
                            {"idem_keys_before", 2}, {"idem_keys_after", 1}}),
        nemesis_ok(1000, 2, {{"action", "failover"}, {"target", "redis"}, {"idem_keys_before", 1},
                             {"idem_keys_after", 0}, {"switch_ms", 1700}}),
        nemesis_ok(2000, 3, {{"action", "kill"}, {"target", "A"}, {"key", "idem:k"}}),
        HistoryRecord{1, 2300'000'000, "A2", Op::answer, {{"code", 409}, {"source", "in_progress"}}},
        HistoryRecord{1, 2600'000'000, "A2", Op::answer, {{"code", 409}, {"source", "in_progress"}}},
        HistoryRecord{1, 3000'000'000, "relab", Op::observe, {{"key", "idem:k"}, {"pttl_ms", 7'200'000}}},
    };
    const auto m = idem_fault_measurements(s, h);
    ASSERT_EQ(m.size(), 4u);
    EXPECT_EQ(m[0].label, "idempotency keys lost by the crash (appendonly no)");
    EXPECT_EQ(m[0].measured, "1 of 2");
    EXPECT_EQ(m[0].documented, "the last 60 s");
    EXPECT_EQ(m[1].measured, "0 of 1");
    EXPECT_EQ(m[2].measured, "1700 ms");
    EXPECT_EQ(m[3].label, "key of the killed client");
    EXPECT_EQ(m[3].measured, "still in_progress at the end (2 × 409 over 0.6 s); PTTL left 7,200 s (≈ 2.0 h)");
    EXPECT_EQ(m[3].documented, "stuck for 24 h");
    // Freed: a 201 after the 409s.
    h.push_back(HistoryRecord{1, 3100'000'000, "A2", Op::answer, {{"code", 201}, {"source", "created"}}});
    EXPECT_EQ(idem_fault_measurements(s, h)[3].measured, "freed 1.1 s after the client died (2 × 409 before, then 201)");
}

}  // namespace idem_parts_test
}  // namespace relab
