#include <algorithm>

#include <gtest/gtest.h>

#include "report/timeline.h"
#include "report_fixture.h"

namespace relab {
namespace {

using test::ms_ns;

std::vector<const TimelineBar*> bars_of(const Timeline& tl, const std::string& lane, TimelineBar::Kind kind) {
    std::vector<const TimelineBar*> out;
    for (const auto& b : tl.bars)
        if (b.lane == lane && b.kind == kind) out.push_back(&b);
    return out;
}

std::vector<const TimelineMarker*> markers_of(const Timeline& tl, TimelineMarker::Kind kind) {
    std::vector<const TimelineMarker*> out;
    for (const auto& m : tl.markers)
        if (m.kind == kind) out.push_back(&m);
    return out;
}

TEST(TimelineTest, baseline_lanes_put_the_producer_first_and_the_late_created_write_overwrites_paid) {
    const LabResult lab = test::baseline_lab();
    const Timeline tl = trial_timeline(lab.trials[0], false);
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"producer", "C1", "C2"}));
    EXPECT_EQ(tl.start_ns, 0);
    EXPECT_EQ(tl.end_ns, ms_ns(817.0));  // the last record: C1's ack

    const auto c1 = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(c1.size(), 1u);
    EXPECT_EQ(c1[0]->start_ns, ms_ns(2.1));
    EXPECT_EQ(c1[0]->end_ns, ms_ns(816.999));
    EXPECT_EQ(c1[0]->label, "created (v=1)");
    EXPECT_TRUE(c1[0]->overwrites);
    const auto c2 = bars_of(tl, "C2", TimelineBar::Kind::job);
    ASSERT_EQ(c2.size(), 1u);
    EXPECT_FALSE(c2[0]->overwrites);
    EXPECT_EQ(c2[0]->end_ns, ms_ns(111.9));

    const auto writes = markers_of(tl, TimelineMarker::Kind::write);
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[0]->lane, "C2");
    EXPECT_EQ(writes[0]->label, "UPDATE 1");
    EXPECT_FALSE(writes[0]->bad);
    EXPECT_EQ(writes[1]->lane, "C1");
    EXPECT_EQ(writes[1]->label, "UPDATE 1 — overwrites v=2");
    EXPECT_TRUE(writes[1]->bad);
    // start and ack draw nothing: 2 publishes, 2 receives, 2 writes.
    EXPECT_EQ(tl.markers.size(), 6u);
    EXPECT_EQ(markers_of(tl, TimelineMarker::Kind::publish).size(), 2u);
}

TEST(TimelineTest, lock_wait_runs_from_receive_to_acquire_and_the_job_from_acquire_to_write) {
    const LabResult lab = test::lock_lab();
    const Timeline tl = trial_timeline(lab.trials[1], false);  // C2 waits 21 attempts; C1's release returns 0
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"C1", "C2"}));
    const auto wait = bars_of(tl, "C2", TimelineBar::Kind::lock_wait);
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_EQ(wait[0]->start_ns, ms_ns(1.0));
    EXPECT_EQ(wait[0]->end_ns, ms_ns(510.0));
    EXPECT_EQ(wait[0]->label, "lock wait, 21 attempt(s)");
    const auto c2_job = bars_of(tl, "C2", TimelineBar::Kind::job);
    ASSERT_EQ(c2_job.size(), 1u);
    EXPECT_EQ(c2_job[0]->start_ns, ms_ns(510.0));
    EXPECT_EQ(c2_job[0]->end_ns, ms_ns(567.0));
    const auto c1_job = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(c1_job.size(), 1u);
    EXPECT_EQ(c1_job[0]->start_ns, ms_ns(3.0));
    EXPECT_TRUE(c1_job[0]->overwrites);

    const auto releases = markers_of(tl, TimelineMarker::Kind::lock_release);
    ASSERT_EQ(releases.size(), 2u);
    EXPECT_FALSE(releases[0]->bad);
    EXPECT_TRUE(releases[1]->bad);
    EXPECT_EQ(releases[1]->label, "release → 0");
    EXPECT_EQ(markers_of(tl, TimelineMarker::Kind::lock_acquire).size(), 2u);
}

TEST(TimelineTest, a_cas_write_that_changes_nothing_overwrites_nothing_and_failed_publishes_are_flagged) {
    const LabResult lab = test::cas_lab();
    const Timeline tl = trial_timeline(lab.trials[0], false);
    const auto writes = markers_of(tl, TimelineMarker::Kind::write);
    ASSERT_EQ(writes.size(), 2u);
    EXPECT_EQ(writes[1]->label, "UPDATE 0");
    EXPECT_FALSE(writes[1]->bad);
    for (const auto& b : tl.bars) EXPECT_FALSE(b.overwrites);
    const auto publishes = markers_of(tl, TimelineMarker::Kind::publish);
    ASSERT_EQ(publishes.size(), 4u);
    EXPECT_EQ(std::count_if(publishes.begin(), publishes.end(), [](const TimelineMarker* m) { return m->bad; }), 2);
    EXPECT_EQ(publishes[0]->label, "fail");
    EXPECT_EQ(publishes[1]->label, "");
}

TEST(TimelineTest, overwrites_are_judged_per_order) {
    TrialOutcome t;
    t.history = {
        test::receive(1, 1, "C1", "1-0", test::event(42, "paid", 2)),
        test::plain_write(1, 10, "C1", test::event(42, "paid", 2), 1),
        test::receive(1, 11, "C1", "1-1", test::event(43, "created", 1)),
        test::plain_write(1, 20, "C1", test::event(43, "created", 1), 1),  // another order: not an overwrite
        test::receive(1, 21, "C1", "1-2", test::event(42, "created", 1)),
        test::plain_write(1, 30, "C1", test::event(42, "created", 1), 1),
    };
    const Timeline tl = trial_timeline(t, true);
    const auto writes = markers_of(tl, TimelineMarker::Kind::write);
    ASSERT_EQ(writes.size(), 3u);
    EXPECT_FALSE(writes[0]->bad);
    EXPECT_FALSE(writes[1]->bad);
    EXPECT_TRUE(writes[2]->bad);
    const auto jobs = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(jobs.size(), 3u);
    EXPECT_EQ(jobs[1]->label, "#43 created (v=1)");
}

TEST(TimelineTest, lanes_sort_publishers_first_then_consumers_in_natural_order) {
    TrialOutcome t;
    t.history = {
        test::receive(1, 1, "C10", "1-0", test::event(42, "created", 1)),
        test::receive(1, 2, "C2", "1-1", test::event(42, "paid", 2)),
        test::rec(1, 3, "producer", "publish", {{"result", "ok"}}),
        test::rec(1, 0, "dispatcher", "publish", {{"result", "ok"}}),
        test::rec(1, 0, "supervisor", "start", nlohmann::json::object()),  // nothing to draw: no lane
    };
    EXPECT_EQ(trial_timeline(t, false).lanes, (std::vector<std::string>{"dispatcher", "producer", "C2", "C10"}));
}

TEST(TimelineTest, unknown_ops_become_generic_markers_and_unfinished_jobs_run_to_the_end) {
    TrialOutcome t;
    t.history = {
        test::rec(1, 0, "app", "outbox_insert", {{"outbox_id", 1}}),
        test::rec(1, 5, "dispatcher", "round", {{"round", 1}}),
        test::receive(1, 6, "C1", "1-0", test::event(42, "created", 1)),
        test::rec(1, 9, "C1", "crash", nlohmann::json::object()),
        test::rec(1, 40, "dispatcher", "round", {{"round", 2}}),
    };
    const Timeline tl = trial_timeline(t, false);
    const auto others = markers_of(tl, TimelineMarker::Kind::other);
    ASSERT_EQ(others.size(), 4u);
    EXPECT_EQ(others[0]->op, "outbox_insert");
    EXPECT_EQ(others[0]->lane, "app");
    EXPECT_NE(others[1]->detail.find("\"round\":1"), std::string::npos) << others[1]->detail;
    const auto job = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(job.size(), 1u);
    EXPECT_TRUE(job[0]->unfinished);
    EXPECT_EQ(job[0]->end_ns, ms_ns(40));
}

TEST(TimelineTest, an_ack_without_a_write_ends_the_job_and_a_skew_moves_the_start_of_the_wait) {
    TrialOutcome t;
    t.history = {
        test::receive(1, 1, "C1", "1-0", test::event(42, "created", 1)),
        test::rec(1, 4, "C1", "ack", {{"entry", "1-0"}}),
        test::receive(1, 10, "C2", "1-1", test::event(42, "paid", 2)),
        test::rec(1, 25, "C2", "skew", {{"ms", 15}}),
        test::lock_acquire(1, 60, "C2", 3, 500),
    };
    const Timeline tl = trial_timeline(t, false);
    const auto c1 = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(c1.size(), 1u);
    EXPECT_EQ(c1[0]->end_ns, ms_ns(4));
    EXPECT_FALSE(c1[0]->unfinished);
    const auto wait = bars_of(tl, "C2", TimelineBar::Kind::lock_wait);
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_EQ(wait[0]->start_ns, ms_ns(25));
    EXPECT_EQ(wait[0]->end_ns, ms_ns(60));
}

TEST(TimelineTest, a_scripted_case_has_a_lane_per_session_and_a_bar_per_statement) {
    const LabResult lab = test::session_lab();
    const Timeline tl = case_timeline(lab.cases[0]);
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"A", "B"}));
    ASSERT_EQ(tl.bars.size(), 6u);
    const TimelineBar& update = tl.bars[3];
    EXPECT_EQ(update.lane, "B");
    EXPECT_EQ(update.start_ns, 300'400'000);
    EXPECT_EQ(update.end_ns, 1'003'411'000);
    EXPECT_FALSE(update.failed);  // the serialization error was expected
    EXPECT_EQ(tl.markers[3].label, "ERROR 40001");
    EXPECT_EQ(tl.end_ns, 1'003'700'000);

    const Timeline wrong = case_timeline(lab.cases[1]);
    ASSERT_EQ(wrong.bars.size(), 3u);
    EXPECT_TRUE(wrong.bars[1].failed);
    EXPECT_TRUE(wrong.markers[1].bad);
    EXPECT_EQ(wrong.markers[1].label, "UPDATE 1");
}

}  // namespace
}  // namespace relab
