// The simulator end to end on the article's own scenario files: the same roles as the real
// backend give the documented outcomes, one seed gives one history byte for byte, and the racy
// lab gives a distribution of outcomes.
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ports/seed_text.h"
#include "ports/seeded_rng.h"
#include "report/reporter.h"
#include "roles/role_settings.h"
#include "roles/roles.h"
#include "backend_real/real_backend.h"
#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim/sim_ports.h"
#include "sim_fixture.h"

namespace relab {

namespace sim_backend_test {

using test::run_sim;
using test::scenario;

std::string history_text(const TrialOutcome& t) {
    std::string out;
    for (const auto& r : t.history) out += to_json(r).dump() + "\n";
    return out;
}

const HistoryRecord* find(const TrialOutcome& t, Op op, const std::string& status = "") {
    for (const auto& r : t.history)
        if (r.op == op && (status.empty() || r.data.value("status", "") == status)) return &r;
    return nullptr;
}

TEST(SimBackendTest, baseline_two_consumers_end_wrong_in_every_trial_as_documented) {
    const LabResult lab = run_sim(scenario("08a-baseline.json"), 10);
    EXPECT_EQ(lab.backend, "sim");
    EXPECT_EQ(lab.total, 10);
    EXPECT_EQ(lab.wrong, 10);
    EXPECT_TRUE(lab.held);
    for (const auto& t : lab.trials) {
        ASSERT_EQ(t.final_rows.size(), 1u);
        EXPECT_EQ(t.final_rows[0].status, "created");
        const auto* paid = find(t, Op::write, "paid");
        const auto* created = find(t, Op::write, "created");
        ASSERT_TRUE(paid && created);
        EXPECT_LT(paid->t_ns, created->t_ns);
        EXPECT_GE(created->t_ns, 800'000'000);
        // Both consumers got an entry before either wrote: the two jobs overlapped.
        int receives_before_first_write = 0;
        for (const auto& r : t.history) {
            if (r.op == Op::write) break;
            receives_before_first_write += r.op == Op::receive;
        }
        EXPECT_EQ(receives_before_first_write, 2);
        EXPECT_EQ(t.stream.size(), 2u);
    }
    EXPECT_EQ(lab.delivery.samples, 20);
    EXPECT_EQ(lab.failing_seeds.size(), 5u);
    EXPECT_EQ(lab.wrong_rate, 1.0);
}

TEST(SimBackendTest, single_consumer_receives_paid_only_after_created_is_written) {
    const LabResult lab = run_sim(scenario("08b-s1.json"), 10);
    EXPECT_EQ(lab.wrong, 0);
    EXPECT_TRUE(lab.held);
    for (const auto& t : lab.trials) {
        const auto* created = find(t, Op::write, "created");
        ASSERT_TRUE(created);
        for (const auto& r : t.history) {
            if (r.op == Op::receive && r.data.at("event").at("type") == "paid") {
                EXPECT_GT(r.t_ns, created->t_ns);
            }
        }
    }
    EXPECT_TRUE(lab.failing_seeds.empty());
}

TEST(SimBackendTest, short_lock_ttl_is_wrong_every_time_and_the_late_release_returns_zero) {
    const LabResult lab = run_sim(scenario("08c-s4c-lock-ttl.json"), 10);
    EXPECT_EQ(lab.wrong, 10);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures[0]);
    EXPECT_EQ(lab.lock_release_method, "compare-and-delete Lua script");
    for (const auto& t : lab.trials) EXPECT_TRUE(t.unmet.empty());
}

TEST(SimBackendTest, cas_on_the_business_version_is_never_wrong_and_the_late_created_gets_update_0) {
    const LabResult lab = run_sim(scenario("08d-a-s5.json"), 10);
    EXPECT_EQ(lab.wrong, 0);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures[0]);
    for (const auto& t : lab.trials) {
        const auto* late = find(t, Op::write, "created");
        ASSERT_TRUE(late);
        EXPECT_EQ(late->data.at("affected"), 0);
        EXPECT_EQ(late->data.at("sql"), "UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1");
    }
}

TEST(SimBackendTest, the_same_seed_gives_the_same_history_byte_for_byte) {
    const Scenario s = scenario("08c-s4b-lock-skew.json");
    const uint64_t seed = trial_seed(s.seed, 3);
    const TrialOutcome a = SimBackend().run_trial(s, 3, seed);
    const TrialOutcome b = SimBackend().run_trial(s, 3, seed);
    EXPECT_EQ(history_text(a), history_text(b));
    EXPECT_EQ(trial_fingerprint(a), trial_fingerprint(b));
    EXPECT_FALSE(history_text(a).empty());
    // Another seed gives another schedule (the skew alone is drawn per actor).
    const TrialOutcome c = SimBackend().run_trial(s, 3, seed + 1);
    EXPECT_NE(history_text(a), history_text(c));
    SimBackend backend;
    const auto [x, y] = backend.self_check(s, seed);
    EXPECT_EQ(x, y);
}

TEST(SimBackendTest, s4a_goes_wrong_at_the_rate_the_readme_prints_and_holds_its_band) {
    // docs/simulator.md: "S4a goes wrong in 23.3% of 10,000 seeds (95% CI 22.5–24.2%)".
    const LabResult lab = run_sim(scenario("08c-s4a-lock.json"), 10000);
    EXPECT_EQ(lab.total, 10000);
    EXPECT_GE(lab.wrong_rate, 0.225);
    EXPECT_LE(lab.wrong_rate, 0.242);
    // Its band (1..54 of 60, kept as a rate: at most 9000 of 10,000) and every wrong trial's
    // mechanism (paid's holder locked first, created overwrote paid) hold.
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
}

TEST(SimBackendTest, lock_race_outcomes_vary_across_seeds) {
    const LabResult lab = run_sim(scenario("08c-s4a-lock.json"), 200);
    EXPECT_EQ(lab.total, 200);
    EXPECT_GT(lab.wrong, 0) << "some seed should let the paid holder take the lock first";
    EXPECT_LT(lab.wrong, 200) << "most seeds let the created holder take it first";
    EXPECT_GT(lab.wrong_rate_high, lab.wrong_rate_low);
    ASSERT_FALSE(lab.failing_seeds.empty());
    // A failing seed replays to the same wrong trial, found by its number.
    SimOptions o;
    o.replay = lab.failing_seeds[0];
    const LabResult replay = SimBackend(o).run(scenario("08c-s4a-lock.json"));
    ASSERT_EQ(replay.trials.size(), 1u);
    EXPECT_TRUE(replay.trials[0].wrong);
    EXPECT_EQ(replay.replay_seed, lab.failing_seeds[0]);
    const auto original = std::find_if(lab.trials.begin(), lab.trials.end(),
                                       [&](const TrialOutcome& t) { return t.seed == lab.failing_seeds[0]; });
    ASSERT_NE(original, lab.trials.end());
    EXPECT_EQ(replay.trials[0].trial, original->trial);
    EXPECT_EQ(trial_fingerprint(replay.trials[0]), trial_fingerprint(*original));
}

TEST(SimBackendTest, outbox_labs_run_the_source_app_and_dispatcher_roles_unchanged) {
    const LabResult naive = run_sim(scenario("08g-b-outbox-naive.json"), 3);
    EXPECT_TRUE(naive.held) << (naive.failures.empty() ? "" : naive.failures[0]);
    const LabResult per_key = run_sim(scenario("08g-c-outbox-per-key.json"), 3);
    EXPECT_TRUE(per_key.held) << (per_key.failures.empty() ? "" : per_key.failures[0]);
    EXPECT_EQ(per_key.wrong, 0);
}

TEST(SimBackendTest, scripted_sessions_are_skipped_with_a_reason) {
    const LabResult lab = run_sim(scenario("08d-c-cas-overlap.json"), 1);
    EXPECT_TRUE(lab.skipped);
    EXPECT_NE(lab.skip_reason.find("real backend"), std::string::npos);
    EXPECT_FALSE(lab.held);  // a skip is not a hold
}

// A job far longer than the quiet period holds its entry: the trial ends once nothing has moved for
// quiet_ms, the busy consumer is stopped, and the entries are the trial's result (lost, pending or never delivered),
// not a failure. (A killed fiber unwinds when its sleep ends, so the job ends within the time limit.)
TEST(SimBackendTest, a_job_longer_than_the_quiet_period_leaves_its_entry_pending_as_the_trial_result) {
    Scenario s = scenario("08b-s1.json");
    s.flow().job_cost_ms["created"] = 40'000;
    s.flow().stream.quiet_ms = 3000;
    const TrialOutcome t = SimBackend().run_trial(s, 1, trial_seed(s.seed, 1));
    // S1's one consumer holds created; paid, behind it, is never delivered.
    EXPECT_EQ(t.accounting.pending, 1);
    EXPECT_EQ(t.accounting.never_delivered, 1);
    EXPECT_EQ(t.accounting.lost, 2);
    ASSERT_EQ(t.accounting.lost_examples.size(), 2u);
    EXPECT_EQ(t.accounting.pending_examples, std::vector<std::string>{t.accounting.lost_examples[0]});
    EXPECT_EQ(t.accounting.never_delivered_examples, std::vector<std::string>{t.accounting.lost_examples[1]});
    const auto quiet = std::find_if(t.history.begin(), t.history.end(),
                                    [](const HistoryRecord& r) { return r.op == Op::observe; });
    ASSERT_NE(quiet, t.history.end());
    EXPECT_EQ(quiet->data.at("quiet_ms"), 3000);
    const auto killed = std::find_if(t.history.begin(), t.history.end(), [](const HistoryRecord& r) {
        return r.op == Op::fault && r.data.value("phase", "") == "ok" && r.data.value("target", "") == "C1";
    });
    EXPECT_NE(killed, t.history.end()) << "the busy consumer is stopped at the trial's end";
}

TEST(SimBackendTest, long_runs_keep_outcomes_for_every_trial_but_timelines_for_few) {
    const LabResult lab = run_sim(scenario("08b-s1.json"), kKeepAllHistories + 100);
    ASSERT_EQ(lab.trials.size(), static_cast<size_t>(kKeepAllHistories + 100));
    EXPECT_FALSE(lab.trials.front().history.empty());
    EXPECT_TRUE(lab.trials.back().history.empty());
    EXPECT_EQ(lab.trials.back().final_rows.at(0).status, "paid");
    EXPECT_EQ(lab.wrong, 0);
}

TEST(SimBackendTest, the_text_report_gives_the_rate_its_interval_the_failing_seeds_and_few_statuses) {
    RunReport run;
    run.labs.push_back(run_sim(scenario("08a-baseline.json"), 60));
    std::ostringstream text;
    make_text_reporter(TextOptions{})->report(run, text);
    const std::string out = text.str();
    EXPECT_NE(out.find("wrong rate 100.0% (95% CI 94.0–100.0%) over 60 trials; failing seeds: 0x"), std::string::npos) << out;
    EXPECT_NE(out.find("… (10 more)"), std::string::npos) << out;
    EXPECT_NE(out.find("trial 1 (seed " + seed_text(run.labs[0].trials[0].seed) + ")"), std::string::npos) << out;
    const nlohmann::json j = run_to_json(run);
    const auto& summary = j.at("labs").at(0).at("summary");
    EXPECT_EQ(j.at("labs").at(0).at("backend"), "sim");
    EXPECT_EQ(summary.at("wrong_rate"), 1.0);
    EXPECT_EQ(summary.at("failing_seeds").size(), 5u);
    EXPECT_EQ(summary.at("failing_seeds").at(0), seed_text(run.labs[0].trials[0].seed));
    EXPECT_NEAR(summary.at("ci95").at(0).get<double>(), 0.9398, 1e-3);
}

}  // namespace sim_backend_test
}  // namespace relab

namespace relab {
namespace sim_backend_test {

// The schedule's repeat and its failures, on the simulator: "restart C1 every 300 ms, 3 times from
// 100 ms" fires at 100, 400 and 700 ms after the origin, each an invoke followed by an ok; a
// resume of a consumer that is not paused is recorded as a fail with the reason, and the trial
// goes on.
TEST(SimFaultScheduleTest, a_repeated_fault_fires_count_times_every_ms_and_a_failed_one_is_recorded) {
    Scenario s = test::scenario("08h-restart-pel.json");
    s.faults.clear();
    FaultSpec restart;
    restart.action = FaultAction::restart;
    restart.target = Target::role("C1");
    restart.trigger.at_ms = 100;
    restart.trigger.every_ms = 300;
    restart.trigger.count = 3;
    FaultSpec resume;
    resume.action = FaultAction::resume;
    resume.target = Target::role("C2");
    resume.trigger.at_ms = 50;
    s.faults = {restart, resume};
    s.expect = Expectation{};  // only the schedule is under test here
    s.expect.wrong = Expectation::Count::at_least;
    s.expect.n = 0;
    const LabResult lab = test::run_sim(s, 3);
    ASSERT_EQ(lab.trials.size(), 3u);
    for (const auto& t : lab.trials) {
        std::vector<std::string> seen;
        for (const auto& r : t.history) {
            if (r.op != Op::fault) continue;
            seen.push_back(fmt::format("{} {} {} {} @{}", r.data.at("fault").get<int>(), r.data.at("action").get<std::string>(),
                                       r.data.at("target").get<std::string>(), r.data.at("phase").get<std::string>(),
                                       r.t_ns / 1'000'000));
            if (r.data.at("phase") == "fail") {
                EXPECT_EQ(r.data.at("error"), "C2 is not paused");
            }
        }
        EXPECT_EQ(seen, (std::vector<std::string>{"2 resume C2 invoke @50", "2 resume C2 fail @50",
                                                  "1 restart C1 invoke @100", "1 restart C1 ok @100",
                                                  "1 restart C1 invoke @400", "1 restart C1 ok @400",
                                                  "1 restart C1 invoke @700", "1 restart C1 ok @700"}));
    }
}

// "until": "published": the repeats go on while the producer publishes and end with it, however
// many the schedule would allow. The events are due up to 900 ms: "restart C1 every 300 ms from 100
// ms" fires at 100, 400 and 700 ms, never at 1000 ms; each restart found C1 running and says it
// killed it. A restart of a role that is not running starts it and says it killed nothing.
TEST(SimFaultScheduleTest, a_fault_repeated_until_published_ends_with_the_producer) {
    Scenario s = test::scenario("08h-restart-pel.json");
    s.flow().events = {EventSpec{.order = 42, .type = "created", .version = 1, .at_ms = 0},
                EventSpec{.order = 42, .type = "paid", .version = 2, .at_ms = 900}};
    s.flow().job_cost_ms = {{"created", 10}, {"paid", 10}};
    s.faults.clear();
    FaultSpec restart;
    restart.action = FaultAction::restart;
    restart.target = Target::role("C1");
    restart.trigger.at_ms = 100;
    restart.trigger.every_ms = 300;
    restart.trigger.count = k_fault_count_until_published;
    restart.trigger.until_published = true;
    FaultSpec kill;
    kill.action = FaultAction::kill;
    kill.target = Target::role("C2");
    kill.trigger.at_ms = 50;
    FaultSpec start = restart;
    start.target = Target::role("C2");
    start.trigger = FaultTrigger{};
    start.trigger.at_ms = 60;
    s.faults = {restart, kill, start};
    s.expect = Expectation{};
    s.expect.wrong = Expectation::Count::at_least;
    s.expect.n = 0;
    const LabResult lab = test::run_sim(s, 3);
    ASSERT_EQ(lab.trials.size(), 3u);
    for (const auto& t : lab.trials) {
        std::vector<std::string> seen;
        for (const auto& r : t.history)
            if (r.op == Op::fault && r.data.at("phase") == "ok")
                seen.push_back(fmt::format("{} {} {}{} @{}", r.data.at("fault").get<int>(),
                                           r.data.at("action").get<std::string>(), r.data.at("target").get<std::string>(),
                                           r.data.contains("killed") ? r.data.at("killed").get<bool>() ? " killed" : " started"
                                                                     : "",
                                           r.t_ns / 1'000'000));
        EXPECT_EQ(seen, (std::vector<std::string>{"2 kill C2 @50", "3 restart C2 started @60", "1 restart C1 killed @100",
                                                  "1 restart C1 killed @400", "1 restart C1 killed @700"}));
        EXPECT_EQ(t.accounting.lost, 0);
    }
}

// Both triggers: the fault waits for whichever comes later. "at 600 ms, once created was received"
// fires at 600 ms (the receipt came first); "at 10 ms, once paid was written" waits for the write.
TEST(SimFaultScheduleTest, a_fault_with_at_ms_and_after_fires_at_whichever_comes_later) {
    Scenario s = test::scenario("08h-restart-pel.json");
    FaultSpec late_clock;
    late_clock.action = FaultAction::observe;
    late_clock.target = Target::of(FaultTarget::redis);
    late_clock.trigger.at_ms = 600;
    late_clock.trigger.after = FaultTrigger::After{Op::receive, "", {{"event", {{"type", "created"}}}}};
    FaultSpec late_record = late_clock;
    late_record.trigger.at_ms = 10;
    late_record.trigger.after = FaultTrigger::After{Op::write, "", {{"event", {{"type", "paid"}}}}};
    s.faults = {late_clock, late_record};
    s.expect = Expectation{};
    s.expect.wrong = Expectation::Count::at_least;
    s.expect.n = 0;
    const LabResult lab = test::run_sim(s, 5);
    for (const auto& t : lab.trials) {
        std::map<int, int64_t> fired;
        int64_t created_received = -1, paid_written = -1;
        for (const auto& r : t.history) {
            if (r.op == Op::fault && r.data.value("phase", "") == "invoke") fired[r.data.at("fault").get<int>()] = r.t_ns;
            const std::string type = r.data.contains("event") ? r.data.at("event").value("type", "") : "";
            if (r.op == Op::receive && type == "created" && created_received < 0) created_received = r.t_ns;
            if (r.op == Op::write && type == "paid" && paid_written < 0) paid_written = r.t_ns;
        }
        ASSERT_EQ(fired.size(), 2u);
        ASSERT_GE(created_received, 0);
        ASSERT_GE(paid_written, 0);
        EXPECT_LT(created_received, 600'000'000);
        EXPECT_GE(fired[1], 600'000'000);  // the clock came last
        EXPECT_LT(fired[1], 601'000'000);
        EXPECT_GT(paid_written, 10'000'000);
        EXPECT_GE(fired[2], paid_written);  // the record came last
        EXPECT_LT(fired[2], paid_written + 2'000'000);
    }
}

}  // namespace sim_backend_test
}  // namespace relab

namespace relab {
namespace sim_backend_test {

// drop_link on one role (08k-drop-clients aimed at C1 alone): C1's blocked XREADGROUP is answered
// with "server closed the connection" at once, it records the error and reads again on a new
// connection; the producer's and the reaper's connections are untouched, so created goes out on
// its first try; nothing is lost or processed twice.
TEST(SimFaultScheduleTest, drop_link_on_one_role_closes_its_blocked_read_and_no_other_connection) {
    Scenario s = test::scenario("08k-drop-clients.json");
    s.faults.at(0).target = Target::role("C1");
    s.expect = Expectation{};  // the lab's own sequence expects the producer's failed try
    s.expect.wrong = Expectation::Count::none;
    const LabResult lab = test::run_sim(s, 20);
    ASSERT_EQ(lab.trials.size(), 20u);
    for (const auto& t : lab.trials) {
        std::vector<std::string> errors;
        int64_t fault_ok = -1, c1_error = -1;
        for (const auto& r : t.history) {
            if (r.op == Op::fault && r.data.at("phase") == "ok") {
                fault_ok = r.t_ns;
                EXPECT_EQ(r.data.at("text"), "closed 1 Redis connection(s) of C1");
            }
            if (r.op == Op::error) {
                errors.push_back(r.actor + ": " + r.data.at("error").get<std::string>());
                if (r.actor == "C1") c1_error = r.t_ns;
            }
            if (r.op == Op::publish) {
                EXPECT_EQ(r.data.at("result"), "ok") << to_json(r).dump();
            }
        }
        EXPECT_EQ(errors, (std::vector<std::string>{"C1: server closed the connection"}));
        EXPECT_GE(c1_error, fault_ok);
        EXPECT_LT(c1_error - fault_ok, 1'000'000);  // the blocked read is answered at once, not at its BLOCK's end
        EXPECT_EQ(t.accounting.lost, 0);
        EXPECT_EQ(t.accounting.duplicated, 0);
        EXPECT_EQ(t.accounting.processed_once, 2);
    }
}

}  // namespace sim_backend_test
}  // namespace relab

namespace relab {
namespace sim_backend_test {

// 08j-outbox-pg-restart on the simulator: the round's marks die with PostgreSQL, so 42's two rows
// go out again and a plain UPDATE writes created over paid; with the marks committed per row
// (its mutant) only the row in flight, 42 paid, goes out again.
TEST(SimFaultScheduleTest, a_postgres_restart_mid_round_republishes_the_rounds_rows) {
    const Scenario s = test::scenario("08j-outbox-pg-restart.json");
    const LabResult lab = test::run_sim(s, 20);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    auto stream_of = [](const TrialOutcome& t) {
        std::vector<std::string> out;
        for (const auto& e : t.stream) out.push_back(e.field("order") + ":" + e.field("type"));
        return out;
    };
    EXPECT_EQ(stream_of(lab.trials[0]), (std::vector<std::string>{"42:created", "42:paid", "42:created", "42:paid",
                                                                   "43:created", "43:paid"}));
    const LabResult per_row = test::run_sim(apply_mutant(s, s.mutants.at(0)), 5);
    EXPECT_EQ(stream_of(per_row.trials[0]),
              (std::vector<std::string>{"42:created", "42:paid", "42:paid", "43:created", "43:paid"}));
}

// A program is a real process: the simulator skips an exec lab, and a lab without one runs.
TEST(SimBackendTest, a_lab_whose_consumers_are_a_program_is_skipped_with_the_reason) {
    const LabResult lab = run_sim(scenario("examples/php-s5.json"), 1);
    EXPECT_TRUE(lab.skipped);
    EXPECT_NE(lab.skip_reason.find("its consumer is a program of your own (exec), which runs on real servers only"),
              std::string::npos)
        << lab.skip_reason;
    Scenario own = scenario("examples/php-s5.json");
    own.exec.by_role.clear();  // the same lab with relab's own consumers
    EXPECT_FALSE(run_sim(own, 1).skipped);
}

// What the simulator cannot model it skips, and says why: a paused PostgreSQL, and a setting
// under which a restart may lose committed rows.
TEST(SimFaultScheduleTest, postgres_labs_the_model_cannot_run_are_skipped_with_the_reason) {
    Scenario paused = test::scenario("08j-outbox-pg-restart.json");
    paused.faults.at(0).action = FaultAction::pause;
    const auto reason = sim_skip_reason(paused);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find("pauses PostgreSQL"), std::string::npos) << *reason;
    Scenario async = test::scenario("08j-outbox-pg-restart.json");
    async.servers.postgres_config["synchronous_commit"] = "off";
    const auto why = sim_skip_reason(async);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("synchronous_commit off"), std::string::npos) << *why;
    // Nothing crashes a PostgreSQL no fault targets: synchronous_commit off then loses nothing.
    async.faults.clear();
    EXPECT_FALSE(sim_skip_reason(async).has_value());
    EXPECT_FALSE(sim_skip_reason(test::scenario("08j-outbox-pg-restart.json")).has_value());
}

// A lab that requires DELEX runs on a Redis 8.4 model (its releases say DELEX IFEQ, as the
// article's did); one that requires XADD IDMP on a Redis 8.6 model.
TEST(SimFaultScheduleTest, a_lab_that_requires_a_redis_8_feature_gets_the_model_or_the_reason) {
    const Scenario delex = test::scenario("beyond-delex-release.json");
    ASSERT_FALSE(sim_skip_reason(delex).has_value());
    const LabResult lab = test::run_sim(delex, 5);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    EXPECT_EQ(lab.lock_release_method, "DELEX IFEQ");
    Scenario lua = delex;
    lua.needs_features.clear();
    EXPECT_EQ(test::run_sim(lua, 1).lock_release_method, "compare-and-delete Lua script");
    // XADD IDMP runs on a Redis 8.6 model: paid's resend after its lost reply adds nothing.
    const Scenario idmp = test::scenario("beyond-idmp-producer.json");
    ASSERT_FALSE(sim_skip_reason(idmp).has_value());
    const LabResult ran = test::run_sim(idmp, 5);
    EXPECT_TRUE(ran.held) << (ran.failures.empty() ? "" : ran.failures.front());
    for (const auto& t : ran.trials) {
        EXPECT_EQ(t.accounting.published, 2);  // one paid, one created
        EXPECT_EQ(t.accounting.republished, 0);
    }
    Scenario plain = idmp;  // the mutant: paid's resend is a second entry
    plain.flow().producer.idmp = false;
    const LabResult twice = test::run_sim(plain, 1);
    EXPECT_EQ(twice.trials.at(0).accounting.published, 3);
    EXPECT_EQ(twice.trials.at(0).accounting.republished, 1);
}

// Whether the simulator injects a fault is the fault table's word (fault/faults.cpp), the same for
// a stream lab as for an idempotency lab: a snapshot in a stream lab is skipped with its reason,
// not started and then refused by the sim's Control mid-trial.
TEST(SimFaultScheduleTest, a_stream_lab_with_a_fault_the_sim_cannot_inject_is_skipped_with_the_tables_reason) {
    Scenario s = test::scenario("08i-restart-aof.json");
    ASSERT_FALSE(sim_skip_reason(s).has_value());
    FaultSpec snapshot;
    snapshot.action = FaultAction::snapshot;
    snapshot.target = Target::of(FaultTarget::redis);
    snapshot.trigger.at_ms = 0;
    s.faults.insert(s.faults.begin(), snapshot);
    const auto reason = sim_skip_reason(s);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find("no RDB model"), std::string::npos) << *reason;
    EXPECT_EQ(*reason, *fault_sim_refusal(FaultAction::snapshot, FaultTarget::redis, false));
    // A replica's link dropped: the stream labs' replication model has it, the idempotency labs' not.
    EXPECT_FALSE(fault_sim_refusal(FaultAction::drop_link, FaultTarget::redis_replica, false).has_value());
    EXPECT_TRUE(fault_sim_refusal(FaultAction::drop_link, FaultTarget::redis_replica, true).has_value());
}

}  // namespace sim_backend_test
}  // namespace relab

namespace relab {
namespace sim_backend_test {

// The ride-out is the lab's to allow: a consumer whose write finds PostgreSQL gone records the
// error and writes again once it is back only in a lab that schedules a postgres fault; in any
// other lab the same StoreUnavailable ends the role (the harness's failure, exit 2).
TEST(SimFaultScheduleTest, a_postgres_outage_is_ridden_out_only_where_a_postgres_fault_is_scheduled) {
    for (const bool scheduled : {true, false}) {
        SCOPED_TRACE(scheduled ? "postgres fault scheduled" : "no postgres fault");
        Scenario s = test::scenario("08j-outbox-pg-restart.json");
        if (!scheduled) s.faults.clear();
        sim::SimWorld world;
        world.reset(sim::Latency{}, Nanos{0}, 1);
        world.orders().reset({{42, "new", 0}});
        world.streams().create_group(s.flow().stream.key, s.flow().stream.group, "$", true);
        sim::SimHistory history;
        history.reset(1);
        sim::SimConnection redis, pg;
        world.redis().open_connection(redis);
        world.postgres().open_connection(pg);
        sim::SimClock clock(world);
        SeededRng rng(1);
        sim::SimStream stream(world, &redis);
        sim::SimKv kv(world, &redis);
        sim::SimOrderStore orders(world, &pg);
        sim::SimOutbox outbox(world, &pg);
        RolePorts ports{clock, rng, stream, kv, orders, outbox, history};
        world.scheduler().spawn("C1", [&] { run_consumer(role_settings(s), "C1", ports); }, Nanos{0});
        world.scheduler().spawn("nemesis", [&] {
            world.scheduler().sleep_for(Millis{5});
            world.postgres().kill();
            world.xadd(s.flow().stream.key, {{{"order", "42"}, {"type", "paid"}, {"v", "2"}}});
            world.scheduler().sleep_for(Millis{200});
            world.postgres().start();
            world.scheduler().sleep_for(Millis{200});
            world.kv().set(kStopKey, "1", sim::SetOptions{}, world.now());
            world.unblock_all_readers();
        }, Nanos{0});
        const auto stop = world.scheduler().run(Millis{10'000});
        std::vector<std::string> ops;
        for (const auto& r : history.take()) ops.push_back(to_string(r.op) + (r.op == Op::error ? " " + r.data.at("server").get<std::string>() : ""));
        if (scheduled) {
            EXPECT_EQ(stop, sim::Scheduler::Stop::idle);
            ASSERT_GE(ops.size(), 4u);
            EXPECT_EQ(ops.front(), "receive");
            EXPECT_EQ(ops[1], "error postgres");
            EXPECT_EQ(ops[ops.size() - 2], "write");
            EXPECT_EQ(ops.back(), "ack");
            EXPECT_EQ(world.orders().rows().at(0).status, "paid");
        } else {
            ASSERT_EQ(stop, sim::Scheduler::Stop::fiber_failed);
            EXPECT_EQ(world.scheduler().failed_fiber(), "C1");
            EXPECT_THROW(std::rethrow_exception(world.scheduler().failure()), StoreUnavailable);
            EXPECT_EQ(ops, (std::vector<std::string>{"receive"}));
            world.scheduler().cancel_all();
        }
    }
}

}  // namespace sim_backend_test
}  // namespace relab
