// The idempotency middleware labs (article 002) on the simulator: the same client and middleware
// code as the real backend, over the simulated keys and orders table. Every count below is what
// the simulated trials measured, from the orders table and the answers; the labs with server
// faults stay on the real backend, each with its reason.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "ports/seed_text.h"
#include "backend_real/real_backend.h"
#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {

namespace sim_idem_test {

using test::run_sim;
using test::scenario;

std::string first_failure(const LabResult& lab) { return lab.failures.empty() ? "" : lab.failures[0]; }

std::vector<const HistoryRecord*> records(const TrialOutcome& t, Op op, const std::string& actor = "") {
    std::vector<const HistoryRecord*> out;
    for (const auto& r : t.history)
        if (r.op == op && (actor.empty() || r.actor == actor)) out.push_back(&r);
    return out;
}

// "code source" of each answer, in time order.
std::vector<std::string> answers(const TrialOutcome& t, const std::string& actor = "") {
    std::vector<std::string> out;
    for (const auto* r : records(t, Op::answer, actor))
        out.push_back(std::to_string(r->data.value("code", 0)) + " " + r->data.value("source", ""));
    return out;
}

TEST(SimIdemTest, double_click_one_order_the_loser_gets_409_while_in_progress_then_the_replay) {
    const LabResult lab = run_sim(scenario("idem-f-mw-double-click.json"), 200);
    EXPECT_EQ(lab.backend, "sim");
    EXPECT_FALSE(lab.skipped) << lab.skip_reason;
    EXPECT_EQ(lab.total, 200);
    EXPECT_EQ(lab.wrong, 0);
    EXPECT_TRUE(lab.held) << first_failure(lab);
    std::map<std::string, int> winners;
    for (const auto& t : lab.trials) {
        SCOPED_TRACE("trial " + std::to_string(t.trial));
        EXPECT_EQ(t.idem.counts.orders, 1);
        EXPECT_EQ(t.idem.counts.duplicates, 0);
        EXPECT_EQ(t.idem.counts.created, 1);
        EXPECT_EQ(t.idem.counts.replays, 1);
        EXPECT_EQ(t.idem.counts.conflicts, 2);  // retries at ~200 ms: still in progress (work 300 ms)
        EXPECT_EQ(t.idem.counts.errors, 0);
        EXPECT_EQ(t.idem.counts.unanswered, 0);
        ASSERT_EQ(t.idem.orders.size(), 1u);
        EXPECT_EQ(t.idem.orders[0].idem_key, "7:8f3a");
        // Exactly one claim found the key free; the replay hands back the winner's own answer.
        const auto claims = records(t, Op::claim);
        const auto firsts = std::count_if(claims.begin(), claims.end(),
                                          [](const HistoryRecord* r) { return r->data.value("decision", "") == "first"; });
        EXPECT_EQ(firsts, 1);
        std::string created_body, replay_body, winner;
        for (const auto* r : records(t, Op::answer)) {
            if (r->data.value("source", "") == "created") {
                created_body = r->data.value("body", "");
                winner = r->actor;
            }
            if (r->data.value("source", "") == "replay") replay_body = r->data.value("body", "");
        }
        EXPECT_FALSE(created_body.empty());
        EXPECT_EQ(replay_body, created_body);
        const std::string loser = winner == "A" ? "B" : "A";
        EXPECT_EQ(answers(t, winner), std::vector<std::string>{"201 created"});
        EXPECT_EQ(answers(t, loser), (std::vector<std::string>{"409 in_progress", "409 in_progress", "201 replay"}));
        ++winners[winner];
    }
    // Which of the two simultaneous clicks wins is the seed's choice: both do in 200 seeds.
    EXPECT_GT(winners["A"], 0);
    EXPECT_GT(winners["B"], 0);
}

TEST(SimIdemTest, another_payload_under_the_same_key_is_refused_with_422_and_no_second_order) {
    for (const char* file : {"idem-g-mw-mismatch.json", "idem-i-key-correct.json"}) {
        SCOPED_TRACE(file);
        const LabResult lab = run_sim(scenario(file), 20);
        EXPECT_TRUE(lab.held) << first_failure(lab);
        EXPECT_EQ(lab.wrong, 0);
        for (const auto& t : lab.trials) {
            EXPECT_EQ(t.idem.counts.orders, 1);
            EXPECT_EQ(t.idem.counts.mismatches, 1);
            EXPECT_EQ(answers(t), (std::vector<std::string>{"201 created", "422 mismatch"}));
        }
    }
}

TEST(SimIdemTest, a_throwing_business_logic_releases_the_key_and_the_retry_creates_the_order_once) {
    const LabResult lab = run_sim(scenario("idem-h-mw-release.json"), 20);
    EXPECT_TRUE(lab.held) << first_failure(lab);
    for (const auto& t : lab.trials) {
        EXPECT_EQ(t.idem.counts.orders, 1);
        EXPECT_EQ(answers(t), (std::vector<std::string>{"500 error", "201 created"}));
        const auto released = records(t, Op::release);
        ASSERT_EQ(released.size(), 1u);
        EXPECT_EQ(released[0]->data.value("deleted", 0), 1);
        EXPECT_EQ(records(t, Op::business_error).size(), 1u);
    }
}

TEST(SimIdemTest, the_hash_in_the_key_turns_the_422_into_a_silent_duplicate_order) {
    const LabResult lab = run_sim(scenario("idem-j-key-hash-in-key.json"), 20);
    EXPECT_TRUE(lab.held) << first_failure(lab);
    EXPECT_EQ(lab.wrong, 20);
    for (const auto& t : lab.trials) {
        EXPECT_EQ(t.idem.counts.orders, 2);
        EXPECT_EQ(t.idem.counts.duplicates, 1);
        EXPECT_EQ(t.idem.counts.mismatches, 0);
        EXPECT_EQ(answers(t), (std::vector<std::string>{"201 created", "201 created"}));
    }
}

TEST(SimIdemTest, a_key_without_user_id_leaks_user_7s_order_to_user_9_and_the_owner_check_stops_it) {
    const LabResult leaky = run_sim(scenario("idem-k-key-no-user.json"), 20);
    EXPECT_TRUE(leaky.held) << first_failure(leaky);
    EXPECT_EQ(leaky.wrong, 20);
    for (const auto& t : leaky.trials) {
        EXPECT_EQ(t.idem.counts.orders, 1);
        EXPECT_EQ(t.idem.counts.leaks, 1);
        EXPECT_EQ(answers(t, "U9"), std::vector<std::string>{"201 replay"});
        ASSERT_EQ(t.idem.leak_examples.size(), 1u);
        EXPECT_NE(t.idem.leak_examples[0].find("user 9"), std::string::npos) << t.idem.leak_examples[0];
    }
    const LabResult checked = run_sim(scenario("idem-l-key-owner-check.json"), 20);
    EXPECT_TRUE(checked.held) << first_failure(checked);
    EXPECT_EQ(checked.wrong, 0);
    for (const auto& t : checked.trials) {
        EXPECT_EQ(t.idem.counts.leaks, 0);
        EXPECT_EQ(t.idem.counts.orders, 1);
        EXPECT_EQ(answers(t, "U9"), std::vector<std::string>{"409 other_user"});
    }
}

TEST(SimIdemTest, after_the_version_bump_layer_4_catches_the_retry_and_the_observation_sees_the_keys) {
    const LabResult lab = run_sim(scenario("idem-m-key-version-bump.json"), 20);
    EXPECT_TRUE(lab.held) << first_failure(lab);
    EXPECT_EQ(lab.wrong, 0);
    for (const auto& t : lab.trials) {
        EXPECT_EQ(t.idem.counts.orders, 2);  // U7's (v1) and U9's (v2)
        EXPECT_EQ(t.idem.counts.layer4, 1);
        EXPECT_EQ(answers(t, "U7"), (std::vector<std::string>{"201 created", "409 layer4"}));
        ASSERT_EQ(t.idem.orders.size(), 2u);
        EXPECT_EQ(t.idem.orders[0].user_id, 7);
        EXPECT_EQ(t.idem.orders[1].user_id, 9);
        std::vector<const HistoryRecord*> observed;  // the nemesis's observation, once it is done
        for (const auto* r : records(t, Op::fault))
            if (r->data.value("action", "") == "observe" && r->data.value("phase", "") == "ok") observed.push_back(r);
        ASSERT_EQ(observed.size(), 1u);
        const std::string text = observed[0]->data.value("text", "");
        // The v1 key still has its day of TTL (nobody reads it); U7's v2 claim was released
        // when layer 4 refused the insert; U9's v2 key holds its done state.
        EXPECT_NE(text.find("idem:order-2026-09-09-001 → TTL 86399 s"), std::string::npos) << text;
        EXPECT_NE(text.find("idem:v2:7:order-2026-09-09-001 → absent"), std::string::npos) << text;
        EXPECT_NE(text.find("idem:v2:9:order-2026-09-09-001 → TTL "), std::string::npos) << text;
        EXPECT_GE(observed[0]->t_ns, 900'000'000);
    }
}

TEST(SimIdemTest, one_seed_is_one_history_and_a_replayed_seed_gives_the_same_trial) {
    const Scenario s = scenario("idem-f-mw-double-click.json");
    const uint64_t seed = trial_seed(s.seed, 4);
    const TrialOutcome a = SimBackend().run_trial(s, 4, seed);
    const TrialOutcome b = SimBackend().run_trial(s, 4, seed);
    EXPECT_EQ(trial_fingerprint(a), trial_fingerprint(b));
    ASSERT_EQ(a.history.size(), b.history.size());
    for (size_t i = 0; i < a.history.size(); ++i) EXPECT_EQ(to_json(a.history[i]), to_json(b.history[i]));
    // The runner's "start" is the origin; the clients' first sends come after it.
    ASSERT_FALSE(a.history.empty());
    const auto start = std::find_if(a.history.begin(), a.history.end(), [](const auto& r) { return r.op == Op::start; });
    ASSERT_NE(start, a.history.end());
    EXPECT_EQ(start->t_ns, 0);
    EXPECT_EQ(start->actor, "relab");
    for (const auto* send : records(a, Op::send)) EXPECT_GE(send->t_ns, 0);
    const TrialOutcome c = SimBackend().run_trial(s, 4, seed + 1);
    EXPECT_NE(trial_fingerprint(a), trial_fingerprint(c));
    SimBackend backend;
    const auto [x, y] = backend.self_check(s, seed);
    EXPECT_EQ(x, y);
    SimOptions o;
    o.replay = seed;
    const LabResult replay = SimBackend(o).run(s);
    ASSERT_EQ(replay.trials.size(), 1u);
    EXPECT_EQ(replay.trials[0].trial, 4);
    EXPECT_EQ(trial_fingerprint(replay.trials[0]), trial_fingerprint(a));
}

TEST(SimIdemTest, labs_with_server_faults_sessions_or_the_benchmark_are_skipped_with_their_reason) {
    const std::map<std::string, std::string> reasons = {
        {"idem-a-race.json", "redis-cli sessions"},
        {"idem-e-memory.json", "redis-cli sessions"},
        {"idem-p-eviction-lru.json", "no memory or eviction model"},
        {"idem-r-restart-rdb.json", "runs redis-server with save 60 1"},
        {"idem-s-restart-aof.json", "runs redis-server with appendfsync everysec"},
        {"idem-t-failover-async.json", "has no such rejoin"},
        {"idem-w-failover-layer4.json", "has no such rejoin"},
        {"idem-x-peak.json", "no memory or eviction model"},
        {"idem-z-bench.json", "throughput"},
    };
    for (const auto& [file, reason] : reasons) {
        SCOPED_TRACE(file);
        const Scenario s = scenario(file);
        const auto why = sim_skip_reason(s);
        ASSERT_TRUE(why.has_value());
        EXPECT_NE(why->find(reason), std::string::npos) << *why;
        const LabResult lab = run_sim(s, 1);
        EXPECT_TRUE(lab.skipped);
        EXPECT_EQ(lab.skip_reason, *why);
    }
    for (const char* file : {"idem-f-mw-double-click.json", "idem-g-mw-mismatch.json", "idem-h-mw-release.json",
                             "idem-i-key-correct.json", "idem-j-key-hash-in-key.json", "idem-k-key-no-user.json",
                             "idem-l-key-owner-check.json", "idem-m-key-version-bump.json"})
        EXPECT_FALSE(sim_skip_reason(scenario(file)).has_value()) << file;
}

TEST(SimIdemTest, a_request_past_phase_1s_ttl_runs_twice_and_its_store_overwrites_the_retrys_answer) {
    const LabResult lab = run_sim(scenario("idem-ttl-a-midrequest.json"), 50);
    EXPECT_TRUE(lab.held) << ::testing::PrintToString(lab.failures);
    for (const auto& t : lab.trials) {
        EXPECT_EQ(t.idem.counts.duplicates, 1);
        // The later replay serves A's order, which A's SET XX left over B's stored answer.
        std::map<std::string, std::string> body;
        for (const auto& r : t.history)
            if (r.op == Op::answer) body[r.actor] = r.data.value("body", "");
        EXPECT_EQ(body["C"], body["A"]);
        EXPECT_NE(body["C"], body["B"]);
    }
    const LabResult fixed = run_sim(apply_mutant(scenario("idem-ttl-a-midrequest.json"),
                                                 scenario("idem-ttl-a-midrequest.json").mutants.at(0)), 50);
    EXPECT_FALSE(fixed.held);
    EXPECT_EQ(fixed.wrong, 0);  // 202 at once: the retry replays it, one order
}

TEST(SimIdemTest, cache_add_then_get_loses_the_state_in_the_window_and_set_nx_get_has_none) {
    const LabResult window = run_sim(scenario("idem-add-get-a-window.json"), 50);
    EXPECT_TRUE(window.held) << ::testing::PrintToString(window.failures);
    for (const auto& t : window.trials) EXPECT_EQ(t.idem.counts.vanished, 1);
    // Under traffic, without the forced pause: a rate, and none with the article's one call.
    Scenario race = scenario("idem-add-get-b-race.json");
    race.expect.until_wrong_max_runs = 0;
    const LabResult rate = run_sim(race, 400);
    EXPECT_GT(rate.wrong, 20);
    EXPECT_LT(rate.wrong, 380);
    const LabResult none = run_sim(apply_mutant(race, race.mutants.at(0)), 400);
    EXPECT_EQ(none.wrong, 0);
}

}  // namespace sim_idem_test
}  // namespace relab
