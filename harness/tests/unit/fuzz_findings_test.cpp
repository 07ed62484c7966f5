// What the fuzzers (harness/fuzz) found, each as the refusal a user now gets. The inputs that
// crashed a target are replayed by ctest's fuzz_regressions (harness/fuzz/regressions/); these
// tests pin the messages.
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/accounting.h"
#include "check/idem_outcome.h"
#include "check/record_fields.h"
#include "process/temp_dir.h"
#include "report/compare/lab_diff.h"
#include "report/lab_summary.h"
#include "report/compare/report_dir.h"
#include "report/reporter.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "util/json_number.h"
#include "util/json_shape.h"

namespace relab {
namespace fuzz_findings_test {

using nlohmann::json;

std::optional<ScenarioError> scenario_error(const std::string& text) {
    try {
        parse_scenario(text, "f.json");
    } catch (const ScenarioError& e) {
        return e;
    }
    return std::nullopt;
}

std::string report_error(const json& j) {
    try {
        run_from_json(j);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "no error";
}

const char* k_lab = R"({
    "id": "t-1", "title": "T", "kind": "workload",
    "orders": [ { "id": 42 } ],
    "events": [ { "order": 42, "type": "created", "version": 1 } ],
    "expect": { "wrong": "none" })";

std::string with_mutant_patch(const json& patch) {
    return std::string(k_lab) + R"(, "mutants": [{"name": "m", "change": "c", "patch": )" + patch.dump() + "}]}";
}

TEST(FuzzFindingsTest, a_number_beyond_a_double_is_a_scenario_error_at_its_line) {
    // The parser throws out_of_range, not parse_error, for it: it escaped the loader.
    const auto e = scenario_error("{\n  \"id\": \"a\",\n  \"runs\": 1e400\n}");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "line 3, column 15");
    EXPECT_STREQ(e->what(), "f.json: at line 3, column 15: number overflow parsing '1e400'");
}

TEST(FuzzFindingsTest, a_report_file_with_a_number_beyond_a_double_is_not_json_and_named) {
    TempDir dir;
    const std::string file = dir.path() + "/run.json";
    std::ofstream(file) << R"({"labs": [], "wall_s": -5e7616})";
    try {
        read_report_dir(dir.path());
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(file + ": not JSON: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
    }
    std::vector<std::string> notes;
    try {
        read_digest(file, notes);  // relab diff's reading of one file
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(file + ": not JSON (", 0), 0u) << e.what();
    }
}

TEST(FuzzFindingsTest, a_scenario_nested_deeper_than_64_is_refused_at_the_value) {
    // Dumping the value into the message recursed once a level: 50,000 '[' overflowed the stack.
    const std::string deep = std::string(50000, '[') + std::string(50000, ']');
    const auto e = scenario_error(R"({"id": "a", "title": )" + deep + "}");
    ASSERT_TRUE(e.has_value());
    std::string path = "/title";
    for (int i = 0; i < 63; ++i) path += "/0";
    EXPECT_EQ(e->json_path(), path);
    EXPECT_EQ(e->reason(), "nested more than 64 arrays and objects deep");
}

TEST(FuzzFindingsTest, a_report_nested_deeper_than_100_is_refused_at_the_value) {
    json deep = json::array();
    for (int i = 0; i < 200; ++i) deep = json::array({deep});
    json j = {{"labs", json::array({{{"id", "x"}, {"scenario", {{"id", deep}}}}})}};
    const std::string e = report_error(j);
    EXPECT_EQ(e.rfind("JSON report: at /labs/0/scenario/id/0/0/", 0), 0u) << e;
    EXPECT_NE(e.find(": nested more than 100 arrays and objects deep"), std::string::npos) << e;
}

TEST(FuzzFindingsTest, a_mutant_patch_that_keeps_doubling_the_lab_is_refused) {
    // {"op": "copy"} of a value into itself, forty times: 2^40 values, out of memory.
    json patch = json::array({{{"op", "add"}, {"path", "/a"}, {"value", json::object()}}});
    for (int i = 0; i < 40; ++i) patch.push_back({{"op", "copy"}, {"from", "/a"}, {"path", "/a/k" + std::to_string(i)}});
    const auto e = scenario_error(with_mutant_patch(patch));
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "/mutants");
    EXPECT_EQ(e->reason().rfind("mutant m: the patch does not apply: op ", 0), 0u) << e->what();
    EXPECT_NE(e->reason().find(" grows the lab by more than 10000 JSON values"), std::string::npos) << e->what();
}

TEST(FuzzFindingsTest, a_mutant_patch_that_nests_the_lab_too_deep_is_refused) {
    // Each copy of /a into its own deepest object about doubles its depth: past 64 in six ops,
    // though the file itself nests 5 deep.
    json patch = json::array({{{"op", "add"}, {"path", "/a"}, {"value", {{"k", json::object()}}}}});
    std::string leaf = "/a/k";
    for (int i = 0; i < 7; ++i) {
        patch.push_back({{"op", "copy"}, {"from", "/a"}, {"path", leaf}});
        leaf += leaf.substr(2);
    }
    const auto e = scenario_error(with_mutant_patch(patch));
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "/mutants");
    EXPECT_NE(e->reason().find("more than 64 arrays and objects deep"), std::string::npos) << e->what();
}

TEST(FuzzFindingsTest, a_mutant_patch_that_replaces_the_lab_with_a_number_is_a_scenario_error) {
    // The loader erased "mutants" from the patched document: a type_error on a number.
    const auto e = scenario_error(with_mutant_patch(json::parse(R"([{"op": "replace", "path": "", "value": 5}])")));
    ASSERT_TRUE(e.has_value());
    EXPECT_STREQ(e->what(), "f.json (mutant m): expected a JSON object at the top level, got 5");
}

TEST(FuzzFindingsTest, a_report_number_its_field_cannot_hold_names_its_path) {
    // get<int>() of 1e300 is undefined behaviour (UBSan: outside the range of representable values).
    EXPECT_EQ(report_error(json::parse(R"({"labs": [{"id": "x", "trials": [{"trial": 1e300}]}]})")),
              "JSON report: at /labs/0/trials/0/trial: expected a number from -2147483648 to 2147483647, got 1e+300");
    EXPECT_EQ(report_error(json::parse(R"({"seed": -1})")),
              "JSON report: at /seed: expected a number from 0 to 18446744073709551615, got -1");
    // The checker subtracts record times: they must stay within ±2^62 ns.
    EXPECT_EQ(report_error(json::parse(R"({"labs": [{"id": "x", "trials": [{"history": [{"op": "start", "t_us": 1e16}]}]}]})")),
              "JSON report: at /labs/0/trials/0/history/0/t_us: expected a time within ±4611686018427387904 ns of the "
              "trial's start, got 10000000000000000");
    EXPECT_EQ(report_error(json::parse(R"({"labs": [{"id": "x", "trials": [{"history": [{"op": "start", "t_ns": -9.2e18}]}]}]})")),
              "JSON report: at /labs/0/trials/0/history/0/t_ns: expected a time within ±4611686018427387904 ns of the "
              "trial's start, got -9200000000000000000");
}

TEST(FuzzFindingsTest, idempotency_fields_of_the_wrong_type_name_their_path) {
    // read_idem_json used json::value(), whose type_error escaped with no path.
    EXPECT_EQ(report_error(json::parse(R"({"labs": [{"id": "x", "trials": [{"idem": {"counts": {"sends": "3"}}}]}]})")),
              "JSON report: at /labs/0/trials/0/idem/counts/sends: expected a number, got a string");
    EXPECT_EQ(report_error(json::parse(R"({"labs": [{"id": "x", "trials": [{"idem": {"counts": 5}}]}]})")),
              "JSON report: at /labs/0/trials/0/idem/counts: expected an object, got a number");
    EXPECT_EQ(report_error(json::parse(R"({"labs": [{"id": "x", "summary": {"measurements": [7]}}]})")),
              "JSON report: at /labs/0/summary/measurements/0: expected an object, got a number");
}

TEST(FuzzFindingsTest, a_null_record_field_reads_as_absent) {
    // history_record_from_json used json::value(), whose type_error a null escaped with.
    const RunReport run = run_from_json(json::parse(
        R"({"labs": [{"id": "x", "trials": [{"history": [{"op": "start", "trial": null, "t_ns": null, "t_us": 7}]}]}]})"));
    ASSERT_EQ(run.labs.at(0).trials.at(0).history.size(), 1u);
    EXPECT_EQ(run.labs[0].trials[0].history[0].t_ns, 7000);
}

TEST(FuzzFindingsTest, counts_summed_over_trials_stop_at_ints_end) {
    // Two trials of a report, "lost": 2147483647 and 1: the total overflowed (UBSan) in digest_run.
    Accounting total;
    total.lost = std::numeric_limits<int>::max();
    Accounting one;
    one.lost = 1;
    one.published = 3;
    total += one;
    EXPECT_EQ(total.lost, std::numeric_limits<int>::max());
    EXPECT_EQ(total.published, 3);
    IdemCounts idem;
    idem.sends = std::numeric_limits<int>::min();
    IdemCounts minus;
    minus.sends = -1;
    idem.add(minus);
    EXPECT_EQ(idem.sends, std::numeric_limits<int>::min());
}

TEST(FuzzFindingsTest, a_publish_delay_bound_must_fit_in_microseconds) {
    // The checker compares it * 1000 with the measured µs: 2^63 - 1 ms overflowed.
    const auto e = scenario_error(std::string(k_lab).substr(0, std::string(k_lab).rfind('}')) +
                                  R"(, "publish_delay_ms": [{"order": 42, "min": 0, "max": 9223372036854775807}]}})");
    ASSERT_TRUE(e.has_value());
    EXPECT_STREQ(e->what(), "f.json: at /expect/publish_delay_ms/0/max: expected an integer in 0..9223372036854775, got "
                            "9223372036854775807");
}

TEST(FuzzFindingsTest, a_text_report_reads_record_fields_of_any_type_and_size) {
    // relab report writes a broken lab's text report into junit.xml. A store record's "ttl_ms":
    // 8.6e62 was cast to int64_t (UBSan; the report target, after the text report joined it), and a
    // reshard record's "from": "two" threw type_error out of relab report.
    RunReport idem = run_from_json(json::parse(
        R"({"labs": [{"id": "x", "lab_kind": "idem_clients", "trials": [{"trial": 1, "history": [
            {"op": "store", "actor": "c1", "t_ns": 0, "key": "k", "ttl_ms": 8.6e62}]}]}]})"));
    EXPECT_NE(lab_text_report(idem.labs.at(0)).find("SET k {done} XX EX 0"), std::string::npos)
        << lab_text_report(idem.labs[0]);
    RunReport shard = run_from_json(json::parse(
        R"({"labs": [{"id": "x", "lab_kind": "stream", "scenario": {"id": "t-1", "title": "T", "kind": "workload",
            "orders": [{"id": 42}], "events": [{"order": 42, "type": "created", "version": 1}],
            "shard": {"streams": 2}, "expect": {"wrong": "none"}},
            "trials": [{"trial": 1, "history": [{"op": "reshard", "actor": "relab", "t_ns": 0, "from": "two", "to": 3}]}]}]})"));
    EXPECT_NE(lab_text_report(shard.labs.at(0)).find("reshard 0 → 3 before event 0"), std::string::npos)
        << lab_text_report(shard.labs[0]);
}

TEST(FuzzFindingsTest, a_record_number_beyond_int64_reads_as_absent) {
    const json data = {{"a", 1e300}, {"b", 18446744073709551615ULL}, {"c", -2.5}, {"d", "7"}};
    EXPECT_EQ(record_fields::int_field(data, "a", -1), -1);
    EXPECT_EQ(record_fields::int_field(data, "b", -1), -1);
    EXPECT_EQ(record_fields::int_field(data, "c", -1), -2);  // truncated, as get<int64_t>() does
    EXPECT_EQ(record_fields::int_field(data, "d", -1), -1);
}

TEST(FuzzFindingsTest, json_number_as_holds_only_what_fits) {
    EXPECT_EQ(json_number_as<int>(json(2147483647)), 2147483647);
    EXPECT_EQ(json_number_as<int>(json(2147483648LL)), std::nullopt);
    EXPECT_EQ(json_number_as<int64_t>(json(9223372036854775807ULL)), INT64_MAX);
    EXPECT_EQ(json_number_as<int64_t>(json(9223372036854775808ULL)), std::nullopt);
    EXPECT_EQ(json_number_as<int64_t>(json(9223372036854775808.0)), std::nullopt);
    EXPECT_EQ(json_number_as<int64_t>(json(-9223372036854775808.0)), INT64_MIN);
    EXPECT_EQ(json_number_as<uint64_t>(json(-1)), std::nullopt);
    EXPECT_EQ(json_number_as<uint64_t>(json(-0.5)), 0u);
    EXPECT_EQ(json_number_as<uint64_t>(json(18446744073709551616.0)), std::nullopt);
    EXPECT_EQ(json_number_as<int>(json(std::numeric_limits<double>::quiet_NaN())), std::nullopt);
    EXPECT_EQ(json_number_as<double>(json(1e300)), 1e300);
    EXPECT_EQ(json_number_as<int>(json("1")), std::nullopt);
}

TEST(FuzzFindingsTest, json_nesting_is_measured_without_recursion) {
    EXPECT_EQ(json_nested_too_deep(json(1), 0), std::nullopt);
    EXPECT_EQ(json_nested_too_deep(json::array(), 1), std::nullopt);
    EXPECT_EQ(json_nested_too_deep(json::array(), 0), "");
    // {"a": [1, {"b/~": []}]} nests 4 deep: the object, "a", its second element, "b/~".
    EXPECT_EQ(json_nested_too_deep(json::parse(R"({"a": [1, {"b/~": []}]})"), 4), std::nullopt);
    EXPECT_EQ(json_nested_too_deep(json::parse(R"({"a": [1, {"b/~": []}]})"), 3), "/a/1/b~1~0");
    EXPECT_EQ(json_nested_too_deep(json::parse(R"({"a": [1, {"b/~": []}]})"), 2), "/a/1");
    EXPECT_EQ(json_nested_too_deep(json::parse(R"({"a": [1, {"b/~": [], "c": 1}]})"), 4), std::nullopt);
    EXPECT_EQ(json_nested_too_deep(json::parse(R"({"x": {}, "a": [1, {"b/~": [[]]}], "z": [[]]})"), 4),
              "/a/1/b~1~0/0");
    EXPECT_EQ(json_value_count(json::parse(R"({"a": [1, {"b": []}], "c": null})"), 100), 6u);
    EXPECT_EQ(json_value_count(json::parse(R"([1, 2, 3, 4])"), 2), 3u);  // stops once past the limit
}

}  // namespace fuzz_findings_test
}  // namespace relab
