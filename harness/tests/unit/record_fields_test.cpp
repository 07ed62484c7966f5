// A history record's "entry" and "event" may sit in its own fields (the simulator's roles write
// them there) or in `data` (a history read from JSON, a role process's line): the readers must see
// the same record either way, and the checker must reach the same outcome.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/outcome.h"
#include "ports/seeded_rng.h"
#include "report/reporter.h"
#include "backend_sim/sim_backend.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {
namespace record_fields_test {

using nlohmann::json;

const std::string k_scenarios = std::string(RELAB_SOURCE_DIR) + "/scenarios";

HistoryRecord typed_receive() {
    return HistoryRecord{1, 5, "C1", Op::receive, {{"via", "new"}}, "1-0", Event{42, "paid", 2}};
}

// The same record with entry and event in data, as from_json reads it.
HistoryRecord in_data(HistoryRecord r) {
    fold_record_fields(r);
    return r;
}

// The other way: entry and event lifted out of data when they have the shape the roles write.
HistoryRecord lifted(HistoryRecord r) {
    RecordNames n;
    if (auto it = r.data.find("entry"); it != r.data.end() && it->is_string() && !it->get<std::string>().empty()) {
        n.entry = it->get<std::string>();
        r.data.erase(it);
    }
    if (auto it = r.data.find("event"); it != r.data.end() && it->is_object() && it->size() == 3 &&
                                        it->contains("order") && it->contains("type") && it->contains("v")) {
        n.event = Event{it->at("order").get<int64_t>(), it->at("type").get<std::string>(), it->at("v").get<int64_t>()};
        r.data.erase(it);
    }
    if (!n.entry.empty() || n.event) r.names = std::make_shared<const RecordNames>(std::move(n));
    return r;
}

TEST(RecordFieldsTest, readers_see_entry_and_event_in_either_place) {
    for (const HistoryRecord& r : {typed_receive(), in_data(typed_receive())}) {
        EXPECT_EQ(record_entry(r), "1-0");
        EXPECT_TRUE(has_entry(r));
        const auto ev = record_event(r);
        ASSERT_TRUE(ev);
        EXPECT_EQ(ev->order, 42);
        EXPECT_EQ(ev->type, "paid");
        EXPECT_EQ(ev->v, 2);
        EXPECT_EQ(record_field(r, "entry"), json("1-0"));
        EXPECT_EQ(record_field(r, "event"), json({{"order", 42}, {"type", "paid"}, {"v", 2}}));
        EXPECT_EQ(record_field(r, "via"), json("new"));
        EXPECT_TRUE(record_field(r, "nothing").is_null());
        EXPECT_TRUE(record_has_fields(r, {{"event", {{"type", "paid"}}}, {"via", "new"}}));
        EXPECT_TRUE(record_has_fields(r, {{"entry", "1-0"}}));
        EXPECT_FALSE(record_has_fields(r, {{"event", {{"type", "created"}}}}));
        EXPECT_FALSE(record_has_fields(r, {{"entry", "2-0"}}));
        EXPECT_FALSE(record_has_fields(r, {{"deliveries", 1}}));
        EXPECT_TRUE(record_has_fields(r, {{"event", {{"order", 42}, {"v", 2}}}}));
        EXPECT_TRUE(record_has_fields(r, {{"event", {{"order", 42}, {"type", "paid"}, {"v", 2}}}}));
        EXPECT_FALSE(record_has_fields(r, {{"event", {{"order", 43}}}}));
        EXPECT_FALSE(record_has_fields(r, {{"event", {{"v", 1}}}}));
        EXPECT_FALSE(record_has_fields(r, {{"event", {{"version", 2}}}}));   // no such member
        EXPECT_FALSE(record_has_fields(r, {{"event", {{"type", {{"x", 1}}}}}}));
        EXPECT_FALSE(record_has_fields(r, {{"event", "paid"}}));
        EXPECT_TRUE(record_has_fields(r, {{"event", json::object()}}));
        EXPECT_FALSE(record_has_fields(r, {{"entry", 1}}));
        EXPECT_EQ(to_json(r).dump(), to_json(typed_receive()).dump());
    }
    // from_json puts every field in data; to_json writes the same line back.
    const HistoryRecord back = history_record_from_json(to_json(typed_receive()));
    EXPECT_FALSE(back.names);
    EXPECT_EQ(to_json(back), to_json(typed_receive()));
}

TEST(RecordFieldsTest, a_record_without_them_or_with_a_malformed_event_has_none) {
    HistoryRecord none{1, 0, "C1", Op::ack, json::object()};
    EXPECT_EQ(record_entry(none), "");
    EXPECT_FALSE(has_entry(none));
    EXPECT_FALSE(record_event(none));
    HistoryRecord odd{1, 0, "C1", Op::receive, {{"entry", 7}, {"event", "paid"}}};
    EXPECT_EQ(record_entry(odd), "");  // not text
    EXPECT_TRUE(has_entry(odd));       // but there
    EXPECT_FALSE(record_event(odd));   // not an object
    HistoryRecord partial{1, 0, "C1", Op::receive, {{"event", {{"type", "paid"}}}}};
    ASSERT_TRUE(record_event(partial));
    EXPECT_EQ(record_event(partial)->order, 0);
    EXPECT_EQ(record_event(partial)->type, "paid");
}

TEST(RecordFieldsTest, fold_moves_them_into_data_once) {
    HistoryRecord r = typed_receive();
    fold_record_fields(r);
    EXPECT_FALSE(r.names);
    EXPECT_EQ(r.data, json({{"entry", "1-0"}, {"event", {{"order", 42}, {"type", "paid"}, {"v", 2}}}, {"via", "new"}}));
    const json once = r.data;
    fold_record_fields(r);
    EXPECT_EQ(r.data, once);
}

// Every stream lab of the repository on the simulator, a few trials each: its histories judged
// with entry and event in the records' own fields give the very report they give in data.
TEST(RecordFieldsTest, the_checker_gives_the_same_outcome_whichever_place_they_are_in) {
    SimOptions o;
    o.trials = 3;
    o.self_check = false;
    SimBackend sim(o);
    int compared = 0, lifted_records = 0;
    for (const auto& s : load_scenario_dir(k_scenarios)) {
        if (s.kind != LabKind::stream) continue;
        const LabResult lab = sim.run(s);
        if (lab.skipped) continue;
        for (const TrialOutcome& t : lab.trials) {
            std::vector<HistoryRecord> typed;
            for (const auto& r : t.history) {
                typed.push_back(lifted(r));
                if (typed.back().names) ++lifted_records;
            }
            RunReport a, b;
            a.labs.push_back(lab);
            a.labs.back().trials = {check_trial(s, t.trial, t.seed, t.history, t.final_rows, t.stream)};
            b.labs.push_back(lab);
            b.labs.back().trials = {check_trial(s, t.trial, t.seed, typed, t.final_rows, t.stream)};
            ASSERT_EQ(run_to_json(a).dump(), run_to_json(b).dump()) << s.id << " trial " << t.trial;
            ++compared;
        }
    }
    EXPECT_GE(compared, 60);
    EXPECT_GE(lifted_records, 500);
}

// sort_by_time moves the few records that are out of place; what it gives must be what a stable
// sort gives, for short histories and long ones (another path), nearly sorted or not at all.
TEST(RecordFieldsTest, sort_by_time_is_a_stable_sort) {
    SeededRng rng(7);
    for (size_t n : {0, 1, 2, 9, 13, 64, 65, 300}) {
        for (int shuffled_pct : {0, 10, 100}) {
            std::vector<HistoryRecord> h;
            for (size_t i = 0; i < n; ++i) {
                int64_t t = static_cast<int64_t>(i / 3);  // three records per instant
                if (rng.uniform(1, 100) <= shuffled_pct) t = rng.uniform(0, static_cast<int64_t>(n));
                h.push_back(HistoryRecord{1, t, "r" + std::to_string(i), Op::ack});
            }
            std::vector<HistoryRecord> want = h;
            std::stable_sort(want.begin(), want.end(),
                             [](const HistoryRecord& a, const HistoryRecord& b) { return a.t_ns < b.t_ns; });
            sort_by_time(h);
            ASSERT_EQ(h.size(), want.size());
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(h[i].actor, want[i].actor) << "n " << n << ", " << shuffled_pct << "% moved, at " << i;
        }
    }
}

}  // namespace record_fields_test
}  // namespace relab
