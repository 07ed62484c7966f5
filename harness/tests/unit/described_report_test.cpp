// The result structs the JSON report carries are described once (scenario/trial_figures.h,
// check/outcome.h): the report's writer and reader, and the figures an expectation bounds, are
// walked from those descriptions. Every described field is set here from the description itself,
// so a field added later is covered without a line of its own.
#include <typeinfo>

#include <gtest/gtest.h>

#include "check/load_stats.h"
#include "check/soak_stats.h"
#include "report/reporter.h"
#include "report/text/load_table.h"
#include "report/text/soak_table.h"
#include "report_fixture.h"

namespace relab {
namespace described_report_test {

using nlohmann::json;

template <class T>
struct Distinct;

// S with every described field given a value of its own, none its default: `i` numbers them.
template <class S>
S filled(int& i) {
    static const S defaults{};
    S s{};
    desc::for_each_field<S>([&](const auto& f) {
        using M = typename std::decay_t<decltype(f)>::Member;
        if constexpr (std::is_same_v<M, bool>)
            s.*f.member = !(defaults.*f.member);
        else
            s.*f.member = Distinct<M>::make(++i);
    });
    return s;
}

template <class S>
S filled() {
    int i = 0;
    return filled<S>(i);
}

template <class T>
    requires std::is_arithmetic_v<T>
struct Distinct<T> {
    static T make(int i) {
        if constexpr (std::is_floating_point_v<T>) return static_cast<T>(i) + 100.25;
        return static_cast<T>(100 + i);
    }
};
template <>
struct Distinct<std::string> {
    static std::string make(int i) { return "value " + std::to_string(i); }
};
template <class T>
struct Distinct<std::vector<T>> {
    static std::vector<T> make(int i) { return {Distinct<T>::make(i), Distinct<T>::make(i + 1000)}; }
};
template <class S>
    requires desc::IsDescribed<S>
struct Distinct<S> {
    static S make(int i) {
        int j = i * 100;
        return filled<S>(j);
    }
};

TEST(DescribedReportTest, every_described_field_round_trips_through_the_json_report) {
    RunReport run = test::sample_run();
    LabResult& stream = run.labs.at(0);
    ASSERT_EQ(stream.scenario.kind, LabKind::stream);
    stream.trials.at(0).load = filled<LoadStats>();
    stream.trials.at(0).soak = filled<SoakStats>();
    stream.trials.at(0).soak.measured = true;
    stream.throughput = filled<ThroughputStats>();
    stream.beside_throughput = Distinct<ThroughputStats>::make(7);
    stream.beside_name = "s1";
    stream.delivery = filled<LatencyStats>();
    run.servers = filled<ServerInfo>();
    LabResult& sessions = run.labs.at(4);
    ASSERT_EQ(sessions.scenario.kind, LabKind::sessions);
    sessions.cases = {filled<CaseOutcome>()};
    ASSERT_EQ(sessions.cases[0].steps.size(), 2u);

    const json j = run_to_json(run);
    const RunReport back = run_from_json(j);
    EXPECT_EQ(back.labs.at(0).trials.at(0).load, stream.trials[0].load);
    EXPECT_EQ(back.labs[0].trials[0].soak, stream.trials[0].soak);
    EXPECT_EQ(back.labs[0].throughput, stream.throughput);
    ASSERT_TRUE(back.labs[0].beside_throughput.has_value());
    EXPECT_EQ(*back.labs[0].beside_throughput, *stream.beside_throughput);
    EXPECT_EQ(back.labs[0].beside_name, "s1");
    EXPECT_EQ(back.labs[0].delivery, stream.delivery);
    EXPECT_EQ(back.servers, run.servers);
    ASSERT_EQ(back.labs.at(4).cases.size(), 1u);
    EXPECT_EQ(back.labs[4].cases[0], sessions.cases[0]);
    EXPECT_EQ(run_to_json(back), j);
    // The keys are the descriptions': the load figures' as before, a latency in microseconds.
    const json& load = j.at("labs").at(0).at("trials").at(0).at("load");
    EXPECT_EQ(load.at("latency_p99_us"), stream.trials[0].load.latency_p99_us);
    EXPECT_EQ(j.at("labs").at(0).at("trials").at(0).at("soak").at("examples").at("recovered"),
              json(stream.trials[0].soak.examples.recovered));
}

// A report an older relab wrote lacks the fields added since: each keeps its default, and a field
// this relab no longer knows is ignored.
TEST(DescribedReportTest, a_report_without_a_later_field_reads_with_its_default) {
    RunReport run = test::sample_run();
    run.labs.at(0).trials.at(0).load = filled<LoadStats>();
    run.labs[0].trials[0].soak = filled<SoakStats>();
    run.labs[0].trials[0].soak.measured = true;
    json j = run_to_json(run);
    json& trial = j["labs"][0]["trials"][0];
    trial["load"].erase("hol_blocked");
    trial["load"].erase("span_us");
    trial["load"]["hol_ms"] = nullptr;
    trial["load"]["a_figure_of_later_relab"] = 3;
    trial["load"]["slots"] = 4.0;  // an integer as a number with a fraction: the report readers took it
    trial["soak"].erase("pending");
    trial["soak"].erase("examples");
    j["labs"][0]["summary"]["throughput"].erase("jobs_per_s_max");
    j.erase("servers");
    const RunReport back = run_from_json(j);
    const LoadStats& l = back.labs.at(0).trials.at(0).load;
    EXPECT_EQ(l.hol_blocked, 0);
    EXPECT_EQ(l.span_us, 0);
    EXPECT_EQ(l.hol_ms, -1);  // null is absent
    EXPECT_EQ(l.slots, 4);
    EXPECT_EQ(l.events, run.labs[0].trials[0].load.events);
    const SoakStats& k = back.labs[0].trials[0].soak;
    EXPECT_TRUE(k.measured);
    EXPECT_EQ(k.pending, -1);
    EXPECT_TRUE(k.examples.recovered.empty());
    EXPECT_EQ(k.kills, run.labs[0].trials[0].soak.kills);
    EXPECT_EQ(back.labs[0].throughput.per_s_max, 0);
    EXPECT_EQ(back.labs[0].throughput.per_s, run.labs[0].throughput.per_s);
    EXPECT_EQ(back.servers.redis_version, "");
}

TEST(DescribedReportTest, a_described_field_of_the_wrong_type_names_its_path) {
    json j = run_to_json(test::sample_run());
    j["labs"][0]["trials"][0]["load"]["events"] = "many";
    try {
        run_from_json(j);
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        // The readers' own error type, which `relab report` and the fuzz target expect.
        EXPECT_EQ(typeid(e), typeid(std::runtime_error));
        EXPECT_EQ(std::string(e.what()),
                  "JSON report: at /labs/0/trials/0/load/events: expected an integer, got \"many\"");
    }
}

// The figures an expectation may bound are the described fields marked bound_as, in their order,
// each in its figure's unit.
TEST(DescribedReportTest, the_figures_an_expectation_bounds_come_from_the_descriptions) {
    EXPECT_EQ(load_figure_names(),
              (std::vector<std::string>{"events", "events_per_s", "latency_p50_ms", "latency_p99_ms", "latency_max_ms",
                                        "utilisation_pct", "hol_ms", "hol_events", "hol_blocked_pct", "wrong_orders"}));
    EXPECT_EQ(soak_figure_names(), (std::vector<std::string>{"kills", "restarts", "fault_failures", "recovered",
                                                             "pending", "undelivered", "deadline_passed"}));
    LoadStats l;
    l.latency_p99_us = 56'789;
    l.events_per_s = 1234.5;
    l.utilisation_pct = 49.4;
    l.hol_events = 3;
    l.hol_blocked = 2;
    EXPECT_EQ(load_figure(l, "latency_p99_ms"), 56);  // truncated, as a band reads milliseconds
    EXPECT_EQ(load_figure(l, "events_per_s"), 1235);
    EXPECT_EQ(load_figure(l, "utilisation_pct"), 49);
    EXPECT_EQ(load_figure(l, "hol_ms"), -1);  // no slow job: -1 is the figure
    EXPECT_EQ(load_figure(l, "hol_blocked_pct"), 67);
    EXPECT_EQ(load_figure(l, "latency_p99_us"), std::nullopt);  // a key of the report, no figure
    EXPECT_EQ(load_figure(l, "slots"), std::nullopt);
    SoakStats k;
    EXPECT_EQ(soak_figure(k, "pending"), std::nullopt);  // the group was not read
    k.pending = 0;
    EXPECT_EQ(soak_figure(k, "pending"), 0);
}

// The load and soak tables' JSON holds the figures described as their columns, as the report
// writes them, beside the rows' own columns; what only the full record needs is left out.
TEST(DescribedReportTest, the_load_and_soak_tables_json_carry_the_tabled_figures) {
    LabResult lab = test::baseline_lab();
    lab.scenario.flow().load.enabled = true;
    lab.scenario.flow().soak.enabled = true;
    lab.trials.at(0).load = filled<LoadStats>();
    lab.trials[0].soak = filled<SoakStats>();
    const json load_row = load_table_json(load_rows({lab})).at(0);
    const json load = desc::write_table_row(lab.trials[0].load);
    ASSERT_EQ(load.size(), 9u);
    for (const auto& [key, value] : load.items()) EXPECT_EQ(load_row.at(key), value) << key;
    EXPECT_EQ(load_row.at("latency_p99_us"), lab.trials[0].load.latency_p99_us);
    EXPECT_FALSE(load_row.contains("span_us"));
    EXPECT_FALSE(load_row.contains("hol_blocked"));
    EXPECT_EQ(load_row.at("id"), lab.scenario.id);
    const json soak_row = soak_table_json(soak_rows({lab})).at(0);
    const json soak = desc::write_table_row(lab.trials[0].soak);
    ASSERT_EQ(soak.size(), 9u);
    for (const auto& [key, value] : soak.items()) EXPECT_EQ(soak_row.at(key), value) << key;
    EXPECT_EQ(soak_row.at("kills"), lab.trials[0].soak.kills);
    EXPECT_FALSE(soak_row.contains("examples"));
    EXPECT_EQ(soak_row.at("latency_p99_us"), lab.trials[0].load.latency_p99_us);
}

}  // namespace described_report_test
}  // namespace relab
