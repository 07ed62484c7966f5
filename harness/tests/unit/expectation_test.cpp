// The expectation terms that name a lab's mechanism: each is checked against hand-written
// histories whose verdict is known, and each is seen to fail.
#include <string>
#include <vector>

#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "check/idem_check.h"
#include "check/outcome.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace expectation_test {

using nlohmann::json;

HistoryRecord rec(int64_t t_ms, const std::string& actor, Op op, json data = json::object()) {
    return HistoryRecord{1, t_ms * 1'000'000, actor, op, std::move(data)};
}

json event(const std::string& type, int64_t v) { return {{"order", 42}, {"type", type}, {"v", v}}; }

HistoryRecord write(int64_t t_ms, const std::string& actor, const std::string& type, int64_t v, int64_t affected = 1) {
    return rec(t_ms, actor, Op::write, {{"event", event(type, v)}, {"status", type}, {"affected", affected}});
}

// The bug's own history (article 000, 08a): paid written at 56 ms, created overwrites it at 806 ms.
std::vector<HistoryRecord> baseline_history() {
    return {rec(0, "C1", Op::receive, {{"entry", "1-0"}, {"event", event("created", 1)}}),
            rec(0, "C2", Op::receive, {{"entry", "1-1"}, {"event", event("paid", 2)}}), write(56, "C2", "paid", 2),
            write(806, "C1", "created", 1)};
}

Scenario lab(const std::string& expect_json, const std::string& extra = "") {
    const std::string text = R"({"id": "t", "title": "T", "kind": "workload", "runs": 10,
        "orders": [{"id": 42}], "events": [{"order": 42, "type": "created", "version": 1},
                                           {"order": 42, "type": "paid", "version": 2}],
        "expect": )" + expect_json + extra + "}";
    return parse_scenario(text, "t.json");
}

TrialOutcome trial(const Scenario& s, std::vector<HistoryRecord> h, const std::string& final_status) {
    return check_trial(s, 1, 7, std::move(h), {{42, final_status, 1}}, {});
}

TEST(ExpectationTest, StaleOverwriteNamesWhichEventOverwroteWhich) {
    const auto seen = stale_overwrites(baseline_history());
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].describe(), "created overwrote paid (#42)");

    const Scenario s = lab(R"({"wrong": "all", "final": {"42": "created"},
                                "stale_overwrite": {"order": 42, "by": "created", "over": "paid"}})");
    EXPECT_TRUE(trial(s, baseline_history(), "created").unmet.empty());
    // Ended created without a stale overwrite (created alone was applied): the wrong outcome, but
    // not the article's mechanism.
    const TrialOutcome other = trial(s, {write(10, "C1", "created", 1)}, "created");
    EXPECT_TRUE(other.wrong);
    EXPECT_EQ(other.unmet,
              std::vector<std::string>{"stale overwrite: created overwrote paid (#42) (seen: none)"});
    // A row left `new` is wrong too, and is not "created".
    EXPECT_EQ(trial(s, {}, "new").unmet,
              (std::vector<std::string>{"#42 = created (it ended new)",
                                        "stale overwrite: created overwrote paid (#42) (seen: none)"}));
}

TEST(ExpectationTest, WrongTrialTermsAreCheckedOnlyInWrongTrials) {
    const Scenario s = lab(R"({"wrong": {"at_least": 1, "at_most": 9},
        "every_wrong_trial": {"sequence": [{"op": "lock_acquire", "fields": {"event": {"type": "paid"}}},
                                           {"op": "lock_acquire", "fields": {"event": {"type": "created"}}}]}})");
    const auto created_first = std::vector<HistoryRecord>{
        rec(1, "C1", Op::lock_acquire, {{"event", event("created", 1)}}),
        rec(802, "C2", Op::lock_acquire, {{"event", event("paid", 2)}})};
    EXPECT_TRUE(trial(s, created_first, "paid").unmet.empty());  // right: not asked why
    // Wrong although created locked first: not the mechanism the lab claims.
    const TrialOutcome t = trial(s, created_first, "created");
    ASSERT_EQ(t.unmet.size(), 1u);
    EXPECT_EQ(t.unmet[0],
              "wrong trial: sequence step 2 (lock_acquire with event={\"type\":\"created\"}) never followed step 1");
    const auto paid_first = std::vector<HistoryRecord>{rec(1, "C2", Op::lock_acquire, {{"event", event("paid", 2)}}),
                                                       rec(52, "C1", Op::lock_acquire, {{"event", event("created", 1)}})};
    EXPECT_TRUE(trial(s, paid_first, "created").unmet.empty());
}

TEST(ExpectationTest, SequenceGapCountsFromTheNamedStep) {
    const Scenario s = lab(R"({"wrong": "none", "sequence": [
        {"op": "claim", "fields": {"decision": "first"}},
        {"op": "answer", "fields": {"code": 409}},
        {"op": "answer", "fields": {"code": 201}, "gap_ms": {"at_least": 1500}, "from_step": 1}]})");
    const auto claim = rec(100, "A", Op::claim, {{"decision", "first"}});
    const auto conflict = rec(1000, "A", Op::answer, {{"code", 409}});
    EXPECT_TRUE(trial(s, {claim, rec(500, "A", Op::answer, {{"code", 201}}), conflict,
                          rec(2000, "A", Op::answer, {{"code", 201}})},
                      "paid")
                    .unmet.empty());
    const TrialOutcome early = trial(s, {claim, conflict, rec(1200, "A", Op::answer, {{"code", 201}})}, "paid");
    ASSERT_EQ(early.unmet.size(), 1u);
    EXPECT_EQ(early.unmet[0], "sequence step 3 (answer with code=201, >= 1500 ms after step 1) came 1100 ms after step 1");
    // Out of order: a 201 before the 409 does not make a 409-then-201 sequence.
    EXPECT_EQ(trial(s, {claim, rec(800, "A", Op::answer, {{"code", 201}}), conflict}, "paid").unmet,
              std::vector<std::string>{"sequence step 3 (answer with code=201, >= 1500 ms after step 1) never followed step 2"});
}

// Article 000 says an entry's ID "changes on every claim": the claimed entry must be the very
// entry the dead consumer received (same ID), delivered a second time.
TEST(ExpectationTest, SequenceStepSameAsAnEarlierStepsFields) {
    const Scenario s = lab(R"({"wrong": "none", "sequence": [
        {"op": "receive", "fields": {"via": "new", "event": {"type": "created"}}},
        {"op": "receive", "fields": {"via": "claim", "deliveries": 2}, "same_as": {"step": 1, "fields": ["entry"]}}]})");
    EXPECT_NE(s.expect.describe().find("(same entry as step 1)"), std::string::npos) << s.expect.describe();
    const auto first = rec(0, "C1", Op::receive, {{"entry", "5-0"}, {"via", "new"}, {"event", event("created", 1)}});
    const auto claimed = [](const std::string& id) {
        return rec(1100, "reaper", Op::receive, {{"entry", id}, {"via", "claim"}, {"deliveries", 2}});
    };
    EXPECT_TRUE(trial(s, {first, claimed("5-0")}, "paid").unmet.empty());
    // A claim that handed out a new ID (what the article claims) is named, with both IDs.
    EXPECT_EQ(trial(s, {first, claimed("9-0")}, "paid").unmet,
              std::vector<std::string>{"sequence step 2 (receive with deliveries=2, via=claim (same entry as step 1)) "
                                       "its entry \"9-0\" differs from step 1's \"5-0\""});
    // The first matching record with the same ID counts, even after one with another ID.
    EXPECT_TRUE(trial(s, {first, claimed("9-0"), claimed("5-0")}, "paid").unmet.empty());
}

TEST(ExpectationTest, RecordBandsNeverAndActor) {
    const Scenario s = lab(R"({"wrong": "none",
        "every_trial_has": [{"op": "fault", "fields": {"action": "flood", "idem_keys_after": 1},
                             "bands": {"oom_errors": {"at_least": 1}}}],
        "never": [{"op": "answer", "actor": "A2", "fields": {"source": "created"}}]})");
    const auto flood = [](int64_t oom, int64_t left) {
        return rec(2200, "nemesis", Op::fault, {{"action", "flood"}, {"oom_errors", oom}, {"idem_keys_after", left}});
    };
    EXPECT_TRUE(trial(s, {flood(12, 1), rec(10, "A", Op::answer, {{"source", "created"}})}, "paid").unmet.empty());
    EXPECT_EQ(trial(s, {flood(0, 1)}, "paid").unmet,
              std::vector<std::string>{"no fault with action=flood, idem_keys_after=1, oom_errors >= 1"});
    EXPECT_EQ(trial(s, {flood(5, 0)}, "paid").unmet.size(), 1u);  // the key did not survive
    EXPECT_EQ(trial(s, {flood(5, 1), rec(3000, "A2", Op::answer, {{"source", "created"}})}, "paid").unmet,
              std::vector<std::string>{"answer by A2 with source=created at 3000 ms, which must not happen"});
}

TEST(ExpectationTest, CountBandsReadTheIdempotencyCounts) {
    Scenario s = lab(R"({"wrong": "none", "counts": {"orders": {"exactly": 1}, "errors": {"at_least": 1}}})");
    s.set_kind(LabKind::idem_clients);
    const std::vector<HistoryRecord> answers = {rec(1, "A", Op::send, {{"request", "r"}, {"attempt", 1}}),
                                                rec(2, "A", Op::answer, {{"request", "r"}, {"attempt", 1}, {"code", 503}})};
    const TrialOutcome none = check_idem_trial(s, 1, 7, answers, {});
    EXPECT_EQ(none.unmet, std::vector<std::string>{"orders = 1 (measured 0)"});
    const TrialOutcome one = check_idem_trial(s, 1, 7, answers, {PlacedOrder{1, 7, "7:k", "{}"}});
    EXPECT_TRUE(one.unmet.empty());
}

TEST(ExpectationTest, TheSequentialRuleRunsOnOnlyWhileTooFewWentWrong) {
    const Scenario s = lab(R"({"wrong": {"at_least": 1, "at_most": 9}, "until_wrong": {"max_runs": 50}})");
    EXPECT_TRUE(s.expect.wants_more(0, 10));
    EXPECT_FALSE(s.expect.wants_more(1, 10));
    EXPECT_FALSE(s.expect.wants_more(0, 50));
    EXPECT_THROW(lab(R"({"wrong": "all", "until_wrong": {"max_runs": 50}})"), ScenarioError);
    EXPECT_THROW(lab(R"({"wrong": {"at_least": 1}, "until_wrong": {"max_runs": 5}})"), ScenarioError);  // < runs
}

TEST(ExpectationTest, MutantsArePatchesValidatedWhenTheFileLoads) {
    const Scenario s = lab(R"({"wrong": "none"})", R"(, "mutants": [{"name": "two-consumers", "change": "2 consumers",
        "patch": [{"op": "add", "path": "/consumers", "value": 2}]}])");
    const Scenario m = apply_mutant(s, s.mutants.at(0));
    EXPECT_EQ(m.flow().consumers, 2);
    EXPECT_EQ(m.mutant, "two-consumers");
    EXPECT_EQ(m.title, "[mutant two-consumers: 2 consumers] T");
    EXPECT_TRUE(m.mutants.empty());
    // A patch that names a missing place, or makes the lab invalid, is a bad file.
    EXPECT_THROW(lab(R"({"wrong": "none"})", R"(, "mutants": [{"name": "x", "change": "c",
        "patch": [{"op": "replace", "path": "/nothing/here", "value": 1}]}])"),
                 ScenarioError);
    EXPECT_THROW(lab(R"({"wrong": "none"})", R"(, "mutants": [{"name": "x", "change": "c",
        "patch": [{"op": "add", "path": "/consumers", "value": 0}]}])"),
                 ScenarioError);
}

TEST(ExpectationTest, EveryShippedScenarioHasAMutant) {
    const auto all = load_scenario_dir(std::string(RELAB_SOURCE_DIR) + "/scenarios");
    ASSERT_GE(all.size(), 41u);
    for (const auto& s : all) {
        EXPECT_FALSE(s.mutants.empty()) << s.id << " has no mutant: a verdict nobody has seen fail is not trusted";
        for (const auto& m : s.mutants) EXPECT_FALSE(m.change.empty()) << s.id << " mutant " << m.name;
    }
}

// A mutant turns the one knob its name says: its patch touches one path, or it says why that knob
// is spelled in several fields (why_several). Every file under scenarios/, in every folder.
TEST(ExpectationTest, EveryShippedMutantTurnsOneKnobOrSaysWhyNot) {
    namespace fs = std::filesystem;
    int files = 0, mutants = 0;
    for (const auto& e : fs::recursive_directory_iterator(std::string(RELAB_SOURCE_DIR) + "/scenarios")) {
        if (!e.is_regular_file() || e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
        const Scenario s = load_scenario(e.path().string());
        ++files;
        for (const auto& m : s.mutants) {
            ++mutants;
            const std::vector<std::string> paths = mutant_paths(m);
            ASSERT_FALSE(paths.empty()) << s.id << " mutant " << m.name;
            if (paths.size() > 1) {
                EXPECT_FALSE(m.why_several.empty())
                    << e.path().filename() << " mutant " << m.name << " turns " << paths.size() << " knobs ("
                    << fmt::format("{}", fmt::join(paths, ", ")) << "): make it one, or say why in why_several";
            }
        }
    }
    EXPECT_GE(files, 80);
    EXPECT_GE(mutants, files);
}

TEST(ExpectationTest, AQuietPeriodNoLongerThanAClaimsWaitIsRefused) {
    nlohmann::json doc = test::scenario_json("08h-claim-plain.json");
    doc["stream"]["quiet_ms"] = 1000;  // the reaper claims after 1000 ms idle, scanning every 100 ms
    test::expect_load_error(doc, "/stream/quiet_ms", "more than 1100 ms");
    doc["stream"]["quiet_ms"] = 1101;
    EXPECT_NO_THROW(parse_scenario(doc.dump(), "f.json"));
}

TEST(ExpectationTest, WhySeveralOnAOnePathMutantIsRefused) {
    EXPECT_THROW(lab(R"({"wrong": "none"})", R"(, "mutants": [{"name": "x", "change": "c", "why_several": "because",
        "patch": [{"op": "add", "path": "/consumers", "value": 2}]}])"),
                 ScenarioError);
    const Scenario two = lab(R"({"wrong": "none"})", R"(, "mutants": [{"name": "x", "change": "c", "why_several": "b",
        "patch": [{"op": "add", "path": "/consumers", "value": 2}, {"op": "replace", "path": "/runs", "value": 3}]}])");
    EXPECT_EQ(mutant_paths(two.mutants.at(0)), (std::vector<std::string>{"/consumers", "/runs"}));
    EXPECT_EQ(two.mutants.at(0).why_several, "b");
}

}  // namespace expectation_test
}  // namespace relab

namespace relab {
namespace expectation_test {

Scenario lab_scenario_for_replay() {
    return parse_scenario(R"({"id": "t", "title": "T", "kind": "workload", "runs": 60,
        "orders": [{"id": 42}], "events": [{"order": 42, "type": "created", "version": 1},
                                           {"order": 42, "type": "paid", "version": 2}],
        "expect": {"wrong": {"at_least": 1, "at_most": 54}}})",
                          "t.json");
}

TEST(ExpectationReplayTest, AReplayedSeedIsJudgedByItsTermsNotByTheRunsCount) {
    LabResult lab;
    lab.scenario = lab_scenario_for_replay();
    TrialOutcome t = check_trial(lab.scenario, 1, 7, {}, {{42, "created", 1}}, {});
    lab.trials = {t};
    lab.replay_seed = 7;
    summarize(lab);
    EXPECT_TRUE(lab.held) << (lab.failures.empty() ? "" : lab.failures.front());
    lab.replay_seed.reset();
    summarize(lab);  // a run of one trial: 54 of 60 scales to at most 1 of 1 (rounded up)
    EXPECT_TRUE(lab.held);
    EXPECT_EQ(lab.scenario.expect.upper_bound(10000), 9000);
    lab.trials[0].unmet = {"no lock_acquire"};
    lab.replay_seed = 7;
    summarize(lab);
    EXPECT_FALSE(lab.held);  // the trial's own terms still count
}

}  // namespace expectation_test
}  // namespace relab
