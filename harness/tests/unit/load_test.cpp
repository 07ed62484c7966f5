// The load labs' pure parts: generated workloads (arrival, seeded job costs, slow jobs), the load
// figures from a history built by hand, their expectation bands, the per-strategy table and plots,
// and the shipped load labs run on the simulator at a small size.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/load_stats.h"
#include "cli/commands.h"
#include "check/outcome.h"
#include "report/text/load_table.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace load_test {

using nlohmann::json;

json load_lab(json generate) {
    return {{"id", "l"},
            {"part", "l"},
            {"title", "t"},
            {"kind", "workload"},
            {"runs", 1},
            {"seed", 77},
            {"generate", std::move(generate)},
            {"consumers", 1},
            {"expect", {{"wrong", "none"}}},
            {"mutants", json::array({{{"name", "m"}, {"change", "c"}, {"patch", json::array({{{"op", "replace"}, {"path", "/consumers"}, {"value", 2}}})}}})}};
}

json three_events() {
    return json::array({{{"type", "created"}, {"version", 1}}, {{"type", "paid"}, {"version", 2}}, {{"type", "shipped"}, {"version", 3}}});
}

Scenario parse(const json& doc) { return parse_scenario(doc.dump(), "f.json"); }

std::string error_of(const json& doc) {
    try {
        parse(doc);
    } catch (const ScenarioError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no error for " << doc.dump();
    return "";
}

int64_t percentile(std::vector<int64_t> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

TEST(GeneratedWorkloadTest, an_arrival_rate_spaces_the_orders_and_every_event_of_an_order_goes_out_together) {
    const Scenario s = parse(load_lab({{"orders", 5}, {"expected_final", "shipped"}, {"arrival", {{"orders_per_s", 500}}},
                                       {"events", three_events()}}));
    ASSERT_EQ(s.flow().events.size(), 15u);
    EXPECT_EQ(s.flow().events[0].at_ms, 0);
    EXPECT_EQ(s.flow().events[2].at_ms, 0);
    EXPECT_EQ(s.flow().events[3].at_ms, 2);   // order 2: 1 / 500 s later
    EXPECT_EQ(s.flow().events[14].at_ms, 8);  // order 5
    EXPECT_TRUE(s.flow().load.enabled);
    EXPECT_EQ(s.flow().load.arrival, "500 orders/s");
    const Scenario burst = parse(load_lab({{"orders", 3}, {"arrival", "burst"}, {"events", three_events()}}));
    EXPECT_TRUE(std::all_of(burst.flow().events.begin(), burst.flow().events.end(), [](const EventSpec& e) { return e.at_ms == 0; }));
    EXPECT_EQ(burst.flow().load.arrival, "burst");
}

// A Poisson process at 100 orders/s: exponential gaps of mean 10 ms, so their mean is near 10 ms
// and their standard deviation near their mean (a steady rate's is 0); the same seed, the same times.
TEST(GeneratedWorkloadTest, poisson_arrivals_have_exponential_gaps_at_the_rate_drawn_from_the_seed) {
    const json poisson = load_lab({{"orders", 4000}, {"arrival", {{"orders_per_s", 100}, {"process", "poisson"}}},
                                   {"events", json::array({{{"type", "created"}, {"version", 1}}})}});
    const Scenario s = parse(poisson);
    ASSERT_EQ(s.flow().events.size(), 4000u);
    EXPECT_EQ(s.flow().load.arrival, "100 orders/s, Poisson");
    std::vector<double> gaps;
    for (size_t i = 1; i < s.flow().events.size(); ++i) {
        ASSERT_GE(s.flow().events[i].at_ms, s.flow().events[i - 1].at_ms);
        gaps.push_back(static_cast<double>(s.flow().events[i].at_ms - s.flow().events[i - 1].at_ms));
    }
    double mean = 0, var = 0;
    for (double g : gaps) mean += g / static_cast<double>(gaps.size());
    for (double g : gaps) var += (g - mean) * (g - mean) / static_cast<double>(gaps.size());
    EXPECT_NEAR(mean, 10.0, 0.6);
    EXPECT_NEAR(std::sqrt(var), 10.0, 1.0);
    EXPECT_EQ(parse(poisson).flow().events[1234].at_ms, s.flow().events[1234].at_ms);
    json other = poisson;
    other["seed"] = 78;
    EXPECT_NE(parse(other).flow().events[1234].at_ms, s.flow().events[1234].at_ms);
    const json steady = load_lab({{"orders", 3}, {"arrival", {{"orders_per_s", 100}, {"process", "steady"}}},
                                  {"events", three_events()}});
    EXPECT_EQ(parse(steady).flow().events[8].at_ms, 20);
}

TEST(GeneratedWorkloadTest, job_costs_are_drawn_from_the_labs_seed_and_follow_their_distribution) {
    json gen = {{"orders", 4000}, {"events", three_events()},
                {"job_cost", {{"dist", "lognormal"}, {"p50_ms", 0.2}, {"p99_ms", 2}}}};
    const Scenario a = parse(load_lab(gen));
    const Scenario b = parse(load_lab(gen));
    std::vector<int64_t> costs;
    for (size_t i = 0; i < a.flow().events.size(); ++i) {
        EXPECT_EQ(a.flow().events[i].cost_us, b.flow().events[i].cost_us);  // same seed, same costs
        costs.push_back(a.flow().events[i].cost_us);
    }
    // 12,000 draws: the sample's p50 and p99 lie near the asked ones.
    EXPECT_NEAR(static_cast<double>(percentile(costs, 0.50)), 200.0, 20.0);
    EXPECT_NEAR(static_cast<double>(percentile(costs, 0.99)), 2000.0, 400.0);
    EXPECT_EQ(a.flow().load.job_cost, "log-normal p50 0.2 ms, p99 2 ms");

    json other = load_lab(gen);
    other["seed"] = 78;
    EXPECT_NE(parse(other).flow().events[0].cost_us + parse(other).flow().events[1].cost_us, a.flow().events[0].cost_us + a.flow().events[1].cost_us);

    const Scenario fixed = parse(load_lab({{"orders", 2}, {"events", three_events()}, {"job_cost", {{"dist", "fixed"}, {"ms", 1.5}}}}));
    EXPECT_TRUE(std::all_of(fixed.flow().events.begin(), fixed.flow().events.end(), [](const EventSpec& e) { return e.cost_us == 1500; }));
    const Scenario uniform = parse(load_lab({{"orders", 500}, {"events", three_events()},
                                              {"job_cost", {{"dist", "uniform"}, {"min_ms", 1}, {"max_ms", 3}}}}));
    for (const auto& e : uniform.flow().events) {
        EXPECT_GE(e.cost_us, 1000);
        EXPECT_LE(e.cost_us, 3000);
    }
    // Without job_cost the lab's per-type job_cost_ms applies, as before.
    EXPECT_EQ(parse(load_lab({{"orders", 2}, {"events", three_events()}})).flow().events[0].cost_us, -1);
}

// The loader remembers its last generated workload for a lab's mutants: one that leaves "generate"
// and the seed alone gets the lab's events, one that changes either gets its own, drawn afresh.
TEST(GeneratedWorkloadTest, a_mutant_gets_the_workload_its_own_generate_and_seed_give) {
    const json gen = {{"orders", 50}, {"events", three_events()},
                      {"job_cost", {{"dist", "lognormal"}, {"p50_ms", 0.2}, {"p99_ms", 2}}}};
    json doc = load_lab(gen);
    doc["mutants"] = json::array(
        {{{"name", "more"}, {"change", "c"}, {"patch", json::array({{{"op", "replace"}, {"path", "/consumers"}, {"value", 2}}})}},
         {{"name", "slower"}, {"change", "c"}, {"patch", json::array({{{"op", "replace"}, {"path", "/generate/job_cost/p99_ms"}, {"value", 9}}})}},
         {{"name", "reseed"}, {"change", "c"}, {"patch", json::array({{{"op", "replace"}, {"path", "/seed"}, {"value", 5}}})}}});
    const Scenario lab = parse(doc);
    const Scenario more = apply_mutant(lab, lab.mutants.at(0));
    EXPECT_EQ(more.flow().events, lab.flow().events);
    EXPECT_EQ(more.flow().consumers, 2);

    json slower_doc = load_lab(gen);
    slower_doc["generate"]["job_cost"]["p99_ms"] = 9;
    json reseed_doc = load_lab(gen);
    reseed_doc["seed"] = 5;
    const Scenario slower = apply_mutant(lab, lab.mutants.at(1));
    const Scenario reseed = apply_mutant(lab, lab.mutants.at(2));
    EXPECT_NE(slower.flow().events, lab.flow().events);
    EXPECT_NE(reseed.flow().events, lab.flow().events);
    EXPECT_EQ(slower.flow().load.job_cost, "log-normal p50 0.2 ms, p99 9 ms");
    // Each as a lab read on its own, after another lab was read in between.
    (void)parse(load_lab({{"orders", 3}, {"events", three_events()}}));
    EXPECT_EQ(parse(slower_doc).flow().events, slower.flow().events);
    EXPECT_EQ(parse(reseed_doc).flow().events, reseed.flow().events);
    EXPECT_EQ(parse(doc).flow().events, lab.flow().events);
}

TEST(GeneratedWorkloadTest, a_slow_job_gets_its_cost_and_bad_workloads_are_refused_with_the_path) {
    const Scenario s = parse(load_lab({{"orders", 10}, {"events", three_events()},
                                       {"job_cost", {{"dist", "fixed"}, {"ms", 0.1}}},
                                       {"slow_jobs", json::array({{{"order", 4}, {"type", "created"}, {"ms", 800}}})}}));
    const auto slow = std::find_if(s.flow().events.begin(), s.flow().events.end(),
                                   [](const EventSpec& e) { return e.order == 4 && e.type == "created"; });
    EXPECT_EQ(slow->cost_us, 800000);
    ASSERT_EQ(s.flow().load.slow_jobs.size(), 1u);

    EXPECT_NE(error_of(load_lab({{"orders", 10}, {"events", three_events()},
                                 {"slow_jobs", json::array({{{"order", 11}, {"type", "created"}, {"ms", 800}}})}}))
                  .find("/generate/slow_jobs/0/order"),
              std::string::npos);
    EXPECT_NE(error_of(load_lab({{"orders", 10}, {"events", three_events()},
                                 {"slow_jobs", json::array({{{"order", 3}, {"type", "refunded"}, {"ms", 800}}})}}))
                  .find("has type \"refunded\""),
              std::string::npos);
    EXPECT_NE(error_of(load_lab({{"orders", 10}, {"events", three_events()}, {"arrival", {{"orders_per_s", 300}}}}))
                  .find("divide 1,000,000"),
              std::string::npos);
    EXPECT_NE(error_of(load_lab({{"orders", 10}, {"events", three_events()},
                                 {"job_cost", {{"dist", "lognormal"}, {"p50_ms", 2}, {"p99_ms", 1}}}}))
                  .find("/generate/job_cost/p99_ms"),
              std::string::npos);
    EXPECT_NE(error_of(load_lab({{"orders", 10}, {"events", three_events()}, {"job_cost", {{"dist", "pareto"}}}}))
                  .find("/generate/job_cost/dist"),
              std::string::npos);
    json bad_band = load_lab({{"orders", 10}, {"events", three_events()}});
    bad_band["expect"]["load"] = {{"p99", {{"at_most", 5}}}};
    EXPECT_NE(error_of(bad_band).find("/expect/load/p99"), std::string::npos);
}

TEST(GeneratedWorkloadTest, orders_resizes_a_generated_workload_and_keeps_the_rest) {
    const Scenario s = parse(load_lab({{"orders", 10}, {"events", three_events()}, {"arrival", {{"orders_per_s", 500}}}}));
    const Scenario small = with_generated_orders(s, 3);
    EXPECT_EQ(small.flow().orders.size(), 3u);
    EXPECT_EQ(small.flow().events.size(), 9u);
    EXPECT_EQ(small.flow().load.arrival, "500 orders/s");
    EXPECT_NE(small.title.find("[--orders 3]"), std::string::npos);
}

TEST(GeneratedWorkloadTest, a_smaller_workload_leaves_out_the_scripted_failures_beyond_it_and_says_so) {
    json doc = load_lab({{"orders", 10}, {"events", three_events()}});
    doc["dispatcher"] = {{"ordering", "per_key"},
                         {"failures", json::array({{{"outbox_id", 3}, {"attempts", {1}}}, {{"outbox_id", 25}, {"attempts", {1}}}})}};
    const Scenario s = parse(doc);
    ASSERT_EQ(s.flow().dispatcher.failures.size(), 2u);
    // 5 orders give 15 outbox rows: row 25 is beyond them, row 3 stays.
    const Scenario small = with_generated_orders(s, 5);
    ASSERT_EQ(small.flow().dispatcher.failures.size(), 1u);
    EXPECT_EQ(small.flow().dispatcher.failures.at(0).outbox_id, 3);
    EXPECT_NE(small.title.find("[--orders 5; 1 scripted failure(s) beyond the smaller workload left out]"), std::string::npos)
        << small.title;
    // Every failure still fits at 9 orders (27 rows): the title says only the size.
    EXPECT_EQ(with_generated_orders(s, 9).flow().dispatcher.failures.size(), 2u);
    EXPECT_NE(with_generated_orders(s, 9).title.find("[--orders 9]"), std::string::npos);
}

HistoryRecord rec(int64_t t_ms, const std::string& actor, Op op, json data) {
    return HistoryRecord{1, t_ms * 1'000'000, actor, op, std::move(data)};
}
json ev(int64_t order, const std::string& type, int64_t v) { return {{"order", order}, {"type", type}, {"v", v}}; }

// One consumer; order 1's created is the slow job (100 ms); order 2's events, published while it
// runs, wait until it is over: S1's head-of-line blocking.
std::vector<HistoryRecord> one_consumer_history() {
    return {rec(0, "producer", Op::publish, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}, {"result", "ok"}}),
            rec(1, "C1", Op::receive, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}}),
            rec(10, "producer", Op::publish, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}, {"result", "ok"}}),
            rec(20, "producer", Op::publish, {{"entry", "3-0"}, {"event", ev(2, "paid", 2)}, {"result", "ok"}}),
            rec(101, "C1", Op::write, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}, {"affected", 1}}),
            rec(102, "C1", Op::receive, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}}),
            rec(103, "C1", Op::write, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}, {"affected", 1}}),
            rec(104, "C1", Op::receive, {{"entry", "3-0"}, {"event", ev(2, "paid", 2)}}),
            rec(105, "C1", Op::write, {{"entry", "3-0"}, {"event", ev(2, "paid", 2)}, {"affected", 1}})};
}

Scenario with_slow_job() {
    Scenario s;
    s.flow().load.enabled = true;
    s.flow().load.slow_jobs = {{1, "created", 100}};
    return s;
}

TEST(LoadStatsTest, latency_throughput_busy_share_and_the_wait_behind_a_slow_job_come_from_the_records) {
    const LoadStats l = load_stats(with_slow_job(), one_consumer_history(), 0);
    EXPECT_EQ(l.events, 3);
    EXPECT_EQ(l.latency_p50_us, 93000);   // 2-0: published at 10, written at 103
    EXPECT_EQ(l.latency_max_us, 101000);  // 1-0
    EXPECT_EQ(l.slots, 1);
    EXPECT_EQ(l.span_us, 105000);
    EXPECT_NEAR(l.events_per_s, 3 / 0.105, 0.01);
    EXPECT_NEAR(l.utilisation_pct, 100.0 * (100 + 1 + 1) / 105.0, 0.01);
    EXPECT_EQ(l.hol_events, 2);
    EXPECT_EQ(l.hol_ms, 92);  // 2-0 waited from 10 to 102 ms
    EXPECT_EQ(load_figure(l, "hol_ms"), 92);
    EXPECT_EQ(load_figure(l, "latency_max_ms"), 101);
    EXPECT_FALSE(load_figure(l, "p99").has_value());
    for (const auto& name : load_figure_names()) EXPECT_TRUE(load_figure(l, name).has_value()) << name;

    // Only load labs (or labs that bound a figure) get their figures computed.
    EXPECT_TRUE(wants_load_stats(with_slow_job()));
    EXPECT_FALSE(wants_load_stats(Scenario{}));
    // Without a slow job there is no head-of-line figure.
    EXPECT_EQ(load_stats(Scenario{}, one_consumer_history(), 0).hol_ms, -1);
}

// One consumer behind its producer: every event was XADDed before the slow job started, and the
// ones still queued then wait behind it all the same; one done before it did not wait.
TEST(LoadStatsTest, events_queued_before_the_slow_job_started_wait_behind_it_too) {
    const std::vector<HistoryRecord> h = {
        rec(0, "producer", Op::publish, {{"entry", "1-0"}, {"event", ev(3, "created", 1)}, {"result", "ok"}}),
        rec(1, "producer", Op::publish, {{"entry", "2-0"}, {"event", ev(1, "created", 1)}, {"result", "ok"}}),
        rec(2, "producer", Op::publish, {{"entry", "3-0"}, {"event", ev(2, "created", 1)}, {"result", "ok"}}),
        rec(5, "C1", Op::receive, {{"entry", "1-0"}, {"event", ev(3, "created", 1)}}),
        rec(6, "C1", Op::write, {{"entry", "1-0"}, {"event", ev(3, "created", 1)}, {"affected", 1}}),
        rec(7, "C1", Op::receive, {{"entry", "2-0"}, {"event", ev(1, "created", 1)}}),
        rec(107, "C1", Op::write, {{"entry", "2-0"}, {"event", ev(1, "created", 1)}, {"affected", 1}}),
        rec(108, "C1", Op::receive, {{"entry", "3-0"}, {"event", ev(2, "created", 1)}}),
        rec(109, "C1", Op::write, {{"entry", "3-0"}, {"event", ev(2, "created", 1)}, {"affected", 1}})};
    const LoadStats l = load_stats(with_slow_job(), h, 0);
    EXPECT_EQ(l.hol_events, 1);  // 3-0; 1-0 started before the slow job did
    EXPECT_EQ(l.hol_ms, 106);    // 3-0 waited from 2 to 108 ms
}

TEST(LoadStatsTest, a_worker_pool_starts_the_job_at_its_take_and_other_orders_do_not_wait) {
    std::vector<HistoryRecord> h = {
        rec(0, "producer", Op::publish, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}, {"result", "ok"}}),
        rec(1, "C1", Op::receive, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}}),
        rec(2, "C1.w1", Op::take, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}}),
        rec(10, "producer", Op::publish, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}, {"result", "ok"}}),
        rec(11, "C1", Op::receive, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}}),
        rec(12, "C1.w2", Op::take, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}}),
        rec(14, "C1.w2", Op::write, {{"entry", "2-0"}, {"event", ev(2, "created", 1)}, {"affected", 1}}),
        rec(102, "C1.w1", Op::write, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}, {"affected", 1}})};
    const LoadStats l = load_stats(with_slow_job(), h, 0);
    EXPECT_EQ(l.slots, 2);
    EXPECT_EQ(l.hol_events, 1);
    EXPECT_EQ(l.hol_ms, 2);  // published at 10, taken at 12
    EXPECT_NEAR(l.utilisation_pct, 100.0 * (100 + 2) / (102.0 * 2), 0.01);
}

TEST(LoadStatsTest, a_load_band_holds_or_names_the_figure_it_missed) {
    Scenario s = with_slow_job();
    s.set_kind(LabKind::stream);
    s.expect.wrong = Expectation::Count::none;
    s.expect.every_trial.load["hol_ms"] = Band{std::nullopt, 50};
    TrialOutcome t = check_trial(s, 1, 1, one_consumer_history(), {}, {});
    EXPECT_EQ(t.load.hol_ms, 92);
    ASSERT_EQ(t.unmet.size(), 1u);
    EXPECT_EQ(t.unmet[0], "hol_ms <= 50 (measured 92)");
    s.expect.every_trial.load["hol_ms"] = Band{80, std::nullopt};
    EXPECT_TRUE(check_trial(s, 1, 1, one_consumer_history(), {}, {}).unmet.empty());
}

TEST(LoadStatsTest, a_cas_on_the_events_own_version_recorded_after_a_newer_write_is_no_stale_overwrite) {
    auto write = [](int64_t t, const std::string& actor, const std::string& entry, json e, const std::string& mode,
                    int64_t version) {
        return rec(t, actor, Op::write,
                   {{"entry", entry}, {"event", e}, {"affected", 1}, {"mode", mode}, {"version", version}});
    };
    // C2's paid committed after C1's created but was recorded first.
    std::vector<HistoryRecord> cas = {write(5, "C2", "2-0", ev(1, "paid", 2), "cas", 2),
                                      write(6, "C1", "1-0", ev(1, "created", 1), "cas", 1)};
    EXPECT_TRUE(stale_overwrites(cas).empty());
    // A CAS on the entry ID's version can overwrite a newer business version: still counted.
    std::vector<HistoryRecord> entry_id = {write(5, "C2", "2-0", ev(1, "paid", 2), "cas", 200),
                                           write(6, "C1", "1-0", ev(1, "created", 1), "cas", 300)};
    EXPECT_EQ(stale_overwrites(entry_id).size(), 1u);
    // A plain write is counted as before.
    std::vector<HistoryRecord> plain = {rec(5, "C2", Op::write, {{"entry", "2-0"}, {"event", ev(1, "paid", 2)}, {"affected", 1}}),
                                        rec(6, "C1", Op::write, {{"entry", "1-0"}, {"event", ev(1, "created", 1)}, {"affected", 1}})};
    EXPECT_EQ(stale_overwrites(plain).size(), 1u);
}

TEST(LoadTableTest, one_row_per_load_lab_as_text_json_and_two_plots) {
    LabResult a;
    a.scenario = with_slow_job();
    a.scenario.id = "load-s1";
    a.scenario.flow().orders.resize(10);
    a.held = true;
    TrialOutcome t;
    t.load.events = 30;
    t.load.events_per_s = 1234.4;
    t.load.latency_p99_us = 56700;
    t.load.hol_ms = 800;
    t.load.wrong_orders = 2;
    t.accounting.lost = 1;
    t.role_peak_rss_kb = {{"C1", 20480}, {"producer", 10240}};
    a.trials.push_back(t);
    LabResult not_load;
    not_load.scenario.id = "08a-baseline";
    not_load.trials.push_back(t);
    const std::vector<LoadRow> rows = load_rows({a, not_load});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].role_peak_rss_kb, 20480);
    std::ostringstream text;
    write_load_table(rows, text);
    EXPECT_NE(text.str().find("s1"), std::string::npos);
    EXPECT_NE(text.str().find("2 (20.0%)"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("1234"), std::string::npos);
    EXPECT_NE(text.str().find("56.7"), std::string::npos);
    EXPECT_NE(text.str().find("20.0"), std::string::npos);
    const json j = load_table_json(rows);
    EXPECT_EQ(j.at(0).at("strategy"), "s1");
    EXPECT_EQ(j.at(0).at("lost"), 1);
    EXPECT_EQ(j.at(0).at("hol_ms"), 800);
    const std::string svg = load_throughput_svg(rows);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("1234.4 events/s"), std::string::npos);
    EXPECT_NE(load_p99_svg(rows).find("56.7 ms"), std::string::npos);
}

// The shipped load labs at 300 orders on the simulator: every one holds, and the figures that tell
// the strategies apart point the way the labs claim.
TEST(LoadLabsTest, the_shipped_load_labs_hold_on_the_simulator_at_a_small_size) {
    std::vector<Scenario> labs = load_scenario_dir(test::k_scenarios + "load");
    // The failover labs (group load-failover) need Sentinel's failover, the isolation labs (group
    // load-isolation) PostgreSQL's transactions: the simulator skips both, naming why.
    std::erase_if(labs, [](const Scenario& s) {
        if (s.group != "load-failover" && s.group != "load-isolation") return false;
        EXPECT_TRUE(sim_skip_reason(s).has_value()) << s.id;
        return true;
    });
    ASSERT_EQ(labs.size(), 9u);
    std::map<std::string, LoadStats> by_id;
    for (const auto& s : labs) {
        ASSERT_FALSE(sim_skip_reason(s).has_value()) << s.id << ": " << *sim_skip_reason(s);
        const LabResult lab = test::run_sim(with_generated_orders(s, 300), 1);
        EXPECT_TRUE(lab.held) << s.id << ": " << (lab.failures.empty() ? "" : lab.failures.front());
        by_id[s.id] = lab.trials.at(0).load;
        EXPECT_FALSE(s.mutants.empty()) << s.id;
    }
    EXPECT_GT(by_id["load-baseline"].wrong_orders, 0);
    EXPECT_GT(by_id["load-s4-lock"].wrong_orders, 0);
    EXPECT_GE(by_id["load-s1"].hol_ms, 600);
    EXPECT_LE(by_id["load-s3"].hol_ms, 200);
    EXPECT_GT(by_id["load-s3"].events_per_s, by_id["load-s1"].events_per_s);
    EXPECT_EQ(by_id["load-s5-cas-poisson"].wrong_orders, 0);
}

// Every load lab's mutant breaks its verdict (the real backend's run of them is in the real tests).
TEST(LoadLabsTest, every_mutant_of_a_load_lab_breaks_it_on_the_simulator) {
    int killed = 0;
    for (const auto& s : load_scenario_dir(test::k_scenarios + "load"))
        for (const auto& m : s.mutants) {
            const LabResult lab = test::run_sim(with_generated_orders(apply_mutant(s, m), 300), 1);
            EXPECT_FALSE(lab.held) << s.id << "/" << m.name << " survived";
            ++killed;
        }
    EXPECT_GE(killed, 8);
}

// `relab list` shows the load labs too, though a run of every lab leaves them out.
TEST(LoadLabsTest, relab_list_names_the_load_labs_beside_the_others) {
    ListOptions o;
    o.scenarios_dir = test::k_scenarios;
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    const int rc = run_list(o);
    std::cout.rdbuf(old);
    EXPECT_EQ(rc, 0);
    EXPECT_NE(out.str().find("08a-baseline"), std::string::npos);
    EXPECT_NE(out.str().find("load-s3-s5"), std::string::npos);
    RunOptions every;
    every.scenarios_dir = test::k_scenarios;
    for (const auto& s : select_labs(every)) EXPECT_NE(s.group, "load") << s.id;
}

TEST(LoadLabs, all_names_every_lab_a_run_without_names_runs) {
    RunOptions every;
    every.scenarios_dir = test::k_scenarios;
    RunOptions all = every;
    all.labs = {"all"};
    std::vector<std::string> a, b;
    for (const auto& s : select_labs(every)) a.push_back(s.id);
    for (const auto& s : select_labs(all)) b.push_back(s.id);
    EXPECT_GT(a.size(), 50u);
    EXPECT_EQ(a, b);
    all.labs = {"all", "load-s3"};  // a named-only lab beside "all" joins it
    EXPECT_EQ(select_labs(all).size(), a.size() + 1);
}

}  // namespace load_test
}  // namespace relab
