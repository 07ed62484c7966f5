#include <algorithm>

#include <gtest/gtest.h>

#include "report/text/timeline.h"
#include "report_fixture.h"

namespace relab {
namespace timeline_test {

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

TEST(TimelineTest, a_trim_and_a_consumers_delete_say_in_their_mark_what_they_took_from_the_group) {
    auto fault = [](int64_t t, const std::string& action, const std::string& target, nlohmann::json data) {
        data["fault"] = action == "trim" ? 1 : 2;
        data["action"] = action;
        data["target"] = target;
        return HistoryRecord{1, t, "nemesis", Op::fault, std::move(data)};
    };
    TrialOutcome t;
    t.history = {
        test::receive(1, 1, "C1", "1-0", test::event(42, "created", 1)),
        fault(5, "trim", "redis", {{"phase", "invoke"}}),
        fault(6, "trim", "redis", {{"phase", "ok"}, {"trimmed", 2}, {"text", "XTRIM orders MAXLEN 1: 2 of 3 entries trimmed"}}),
        fault(7, "delete_consumer", "C2", {{"phase", "invoke"}}),
        fault(8, "delete_consumer", "C2", {{"phase", "ok"}, {"pending_dropped", 1}, {"text", "XGROUP DELCONSUMER …"}}),
    };
    const Timeline tl = trial_timeline(t, false);
    ASSERT_EQ(tl.faults.size(), 2u);
    EXPECT_EQ(tl.faults[0].label, "trim redis (2 trimmed)");
    EXPECT_NE(tl.faults[0].detail.find("2 of 3 entries trimmed"), std::string::npos) << tl.faults[0].detail;
    EXPECT_EQ(tl.faults[1].label, "delete_consumer C2 (1 pending dropped)");
}

TEST(TimelineTest, lanes_sort_publishers_first_then_consumers_in_natural_order) {
    TrialOutcome t;
    t.history = {
        test::receive(1, 1, "C10", "1-0", test::event(42, "created", 1)),
        test::receive(1, 2, "C2", "1-1", test::event(42, "paid", 2)),
        test::rec(1, 3, "producer", Op::publish, {{"result", "ok"}}),
        test::rec(1, 0, "dispatcher", Op::publish, {{"result", "ok"}}),
        test::rec(1, 0, "supervisor", Op::start, nlohmann::json::object()),  // nothing to draw: no lane
    };
    EXPECT_EQ(trial_timeline(t, false).lanes, (std::vector<std::string>{"dispatcher", "producer", "C2", "C10"}));
}

TEST(TimelineTest, ops_without_a_drawing_of_their_own_become_generic_markers_and_unfinished_jobs_run_to_the_end) {
    TrialOutcome t;
    t.history = {
        test::rec(1, 0, "app", Op::outbox_insert, {{"outbox_id", 1}}),
        test::rec(1, 5, "C2", Op::error, {{"error", "NOGROUP"}, {"kind", "reply"}}),
        test::receive(1, 6, "C1", "1-0", test::event(42, "created", 1)),
        test::rec(1, 9, "C1", Op::error, {{"error", "connection lost"}, {"kind", "unavailable"}}),
        test::rec(1, 40, "C2", Op::group_created, {{"group", "order-processor"}, {"start", "0"}}),
    };
    const Timeline tl = trial_timeline(t, false);
    const auto others = markers_of(tl, TimelineMarker::Kind::other);
    ASSERT_EQ(others.size(), 4u);
    EXPECT_EQ(others[0]->op, "outbox_insert");
    EXPECT_EQ(others[0]->lane, "app");
    EXPECT_NE(others[1]->detail.find("NOGROUP"), std::string::npos) << others[1]->detail;
    const auto job = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(job.size(), 1u);
    EXPECT_TRUE(job[0]->unfinished);
    EXPECT_EQ(job[0]->end_ns, ms_ns(40));
}

// S5 under REPEATABLE READ: the refused transaction is a mark inside the job, which goes on to its
// retry's write; a failure the consumer gave up on is flagged.
TEST(TimelineTest, a_serialization_failure_is_named_inside_its_job_and_flagged_when_given_up) {
    TrialOutcome t;
    const nlohmann::json ev = test::event(100, "paid", 2);
    t.history = {
        test::receive(1, 0, "C1", "1-0", ev),
        test::rec(1, 3, "C1", Op::serialization_failure,
                  {{"entry", "1-0"}, {"event", ev}, {"isolation", "repeatable_read"}, {"attempt", 1}, {"retry", true}}),
        test::rec(1, 5, "C1", Op::write, {{"entry", "1-0"}, {"event", ev}, {"affected", 1}, {"attempts", 2}}),
        test::receive(1, 6, "C2", "2-0", ev),
        test::rec(1, 8, "C2", Op::serialization_failure,
                  {{"entry", "2-0"}, {"event", ev}, {"isolation", "serializable"}, {"attempt", 1}, {"retry", false}}),
    };
    const Timeline tl = trial_timeline(t, false);
    const auto others = markers_of(tl, TimelineMarker::Kind::other);
    ASSERT_EQ(others.size(), 2u);
    EXPECT_EQ(others[0]->label, "40001 under repeatable_read, try 1: rolled back, runs again");
    EXPECT_FALSE(others[0]->bad);
    EXPECT_EQ(others[1]->label, "40001 under serializable, try 1: rolled back, given up");
    EXPECT_TRUE(others[1]->bad);
    const auto job = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(job.size(), 1u);
    EXPECT_EQ(job[0]->start_ns, ms_ns(0));
    EXPECT_EQ(job[0]->end_ns, ms_ns(5));
}

TEST(TimelineTest, an_ack_without_a_write_ends_the_job_and_the_lock_wait_counts_from_the_receive) {
    TrialOutcome t;
    t.history = {
        test::receive(1, 1, "C1", "1-0", test::event(42, "created", 1)),
        test::rec(1, 4, "C1", Op::ack, {{"entry", "1-0"}}),
        test::receive(1, 10, "C2", "1-1", test::event(42, "paid", 2)),
        test::lock_acquire(1, 60, "C2", 3, 500),
    };
    const Timeline tl = trial_timeline(t, false);
    const auto c1 = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(c1.size(), 1u);
    EXPECT_EQ(c1[0]->end_ns, ms_ns(4));
    EXPECT_FALSE(c1[0]->unfinished);
    const auto wait = bars_of(tl, "C2", TimelineBar::Kind::lock_wait);
    ASSERT_EQ(wait.size(), 1u);
    EXPECT_EQ(wait[0]->start_ns, ms_ns(10));
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

TEST(TimelineTest, an_idempotency_trial_has_a_lane_per_client_a_bar_per_request_and_flags_the_duplicate_and_the_leak) {
    const LabResult lab = test::idem_lab();
    const Timeline tl = idem_trial_timeline(lab.trials[0]);
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"A", "U9", "relab"}));  // clients first, the runner last
    EXPECT_EQ(tl.end_ns, ms_ns(400.3));

    const auto a = bars_of(tl, "A", TimelineBar::Kind::request);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0]->start_ns, ms_ns(0.1));
    EXPECT_EQ(a[0]->end_ns, ms_ns(50.8));
    EXPECT_EQ(a[0]->code, 201);
    EXPECT_EQ(a[0]->source, "created");
    EXPECT_EQ(a[0]->label, "201 created");
    EXPECT_FALSE(a[0]->duplicate);
    // The second request's INSERT is the second order of idem key 7:8f3a.
    EXPECT_EQ(a[1]->start_ns, ms_ns(300.1));
    EXPECT_EQ(a[1]->end_ns, ms_ns(351.3));
    EXPECT_TRUE(a[1]->duplicate);
    EXPECT_EQ(a[1]->label, "duplicate · 201 created");
    const auto orders = markers_of(tl, TimelineMarker::Kind::order);
    ASSERT_EQ(orders.size(), 2u);
    EXPECT_EQ(orders[0]->label, "order 1");
    EXPECT_FALSE(orders[0]->bad);
    EXPECT_EQ(orders[1]->label, "order 2 — duplicate");
    EXPECT_TRUE(orders[1]->bad);

    // U9 is served order 1, which is user 7's.
    const auto u9 = bars_of(tl, "U9", TimelineBar::Kind::request);
    ASSERT_EQ(u9.size(), 1u);
    EXPECT_TRUE(u9[0]->leak);
    EXPECT_FALSE(u9[0]->duplicate);
    EXPECT_EQ(u9[0]->label, "replay");
    const auto answers = markers_of(tl, TimelineMarker::Kind::answer);
    ASSERT_EQ(answers.size(), 3u);
    EXPECT_EQ(answers[0]->label, "201");
    EXPECT_FALSE(answers[0]->bad);
    EXPECT_EQ(answers[2]->label, "201 leak: order 1 of user 7");
    EXPECT_TRUE(answers[2]->bad);

    const auto faults = markers_of(tl, TimelineMarker::Kind::fault);
    ASSERT_EQ(faults.size(), 1u);
    EXPECT_EQ(faults[0]->lane, "relab");
    EXPECT_EQ(faults[0]->label, "flood");
    EXPECT_EQ(faults[0]->detail, "120.000 ms  relab 8 MB of cache keys written: evicted_keys 6,300");
    // Claims and the store are dots; `start` draws nothing.
    EXPECT_EQ(markers_of(tl, TimelineMarker::Kind::minor).size(), 4u);
    EXPECT_EQ(markers_of(tl, TimelineMarker::Kind::send).size(), 3u);
    EXPECT_EQ(tl.markers.size(), 13u);
}

TEST(TimelineTest, an_idempotency_request_without_an_answer_runs_to_the_end_of_the_trial) {
    const LabResult lab = test::idem_lab();
    const Timeline tl = idem_trial_timeline(lab.trials[1]);
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"A", "B", "relab"}));
    const auto b = bars_of(tl, "B", TimelineBar::Kind::request);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_TRUE(b[0]->unfinished);
    EXPECT_EQ(b[0]->code, 0);
    EXPECT_EQ(b[0]->label, "no answer");
    EXPECT_EQ(b[0]->start_ns, ms_ns(60.0));
    EXPECT_EQ(b[0]->end_ns, ms_ns(90.4));
    // A's requests were answered: 201, then 409 while B's claim is in progress.
    const auto a = bars_of(tl, "A", TimelineBar::Kind::request);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[1]->code, 409);
    EXPECT_EQ(a[1]->label, "409 in progress");
    EXPECT_FALSE(a[1]->unfinished);
    // A single order is no duplicate.
    const auto orders = markers_of(tl, TimelineMarker::Kind::order);
    ASSERT_EQ(orders.size(), 1u);
    EXPECT_FALSE(orders[0]->bad);
}

TEST(TimelineTest, layer_four_refusals_deletes_and_failed_waits_are_labelled) {
    TrialOutcome t;
    t.trial = 1;
    t.history = {
        test::rec(1, 0, "A", Op::send, test::idem_send("A#1", 7, "{}")),
        test::rec(1, 1, "A", Op::wait, {{"wanted", 1}, {"acked", 0}, {"timeout_ms", 100}, {"after", "claim"}}),
        test::rec(1, 2, "A", Op::order, {{"idem_key", "7:8f3a"}, {"refused", true}}),
        test::rec(1, 3, "A", Op::release, {{"key", "idem:v1:7:8f3a"}, {"deleted", 1}, {"reason", "layer 4"}}),
        test::rec(1, 4, "A", Op::answer,
                  {{"request", "A#1"}, {"attempt", 1}, {"user_id", 7}, {"code", 409}, {"body", "{\"error\":\"exists\"}"},
                   {"source", "layer4"}}),
    };
    const Timeline tl = idem_trial_timeline(t);
    const auto orders = markers_of(tl, TimelineMarker::Kind::order);
    ASSERT_EQ(orders.size(), 1u);
    EXPECT_EQ(orders[0]->label, "layer 4 refused");
    EXPECT_FALSE(orders[0]->bad);
    const auto minor = markers_of(tl, TimelineMarker::Kind::minor);
    ASSERT_EQ(minor.size(), 2u);
    EXPECT_EQ(minor[0]->label, "WAIT → 0");
    EXPECT_EQ(minor[1]->label, "DEL");
    ASSERT_EQ(tl.bars.size(), 1u);
    EXPECT_EQ(tl.bars[0].source, "layer4");
    EXPECT_EQ(tl.bars[0].label, "409 layer 4");
}

TEST(TimelineTest, nemesis_faults_span_every_lane_and_a_kill_ends_its_targets_job) {
    const LabResult lab = test::crash_lab();
    const Timeline tl = trial_timeline(lab.trials[0], false);
    // No lane for the nemesis: its faults are drawn across the others.
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"producer", "C1", "C2", "reaper"}));
    ASSERT_EQ(tl.faults.size(), 2u);
    const TimelineFault& kill = tl.faults[0];
    EXPECT_EQ(kill.index, "1");
    EXPECT_EQ(kill.label, "kill C1");
    EXPECT_EQ(kill.start_ns, ms_ns(60.0));
    EXPECT_EQ(kill.end_ns, ms_ns(62.5));
    EXPECT_TRUE(kill.ended);
    EXPECT_FALSE(kill.failed);
    EXPECT_EQ(kill.detail, "fault 1: kill C1 — SIGKILL C1 after its write, before its ack; invoke 60.000 ms, ok 62.500 ms");
    const TimelineFault& restart = tl.faults[1];
    EXPECT_TRUE(restart.failed);
    EXPECT_EQ(restart.label, "restart C1 ✕");
    EXPECT_EQ(restart.end_ns, ms_ns(501.0));
    EXPECT_EQ(restart.detail, "fault 2: restart C1 — start C1 again; invoke 500.000 ms, fail 501.000 ms: exec failed");

    // C1's job (written, never acked) ends at the kill, unfinished; C2's runs to its ack.
    const auto c1 = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_EQ(c1.size(), 1u);
    EXPECT_EQ(c1[0]->start_ns, ms_ns(1.0));
    EXPECT_EQ(c1[0]->end_ns, ms_ns(50.0));  // its write closed it first
    const auto c2 = bars_of(tl, "C2", TimelineBar::Kind::job);
    ASSERT_EQ(c2.size(), 1u);
    EXPECT_EQ(c2[0]->end_ns, ms_ns(450.0));

    // The redelivery and the claim are labelled; a first delivery is not.
    const auto receives = markers_of(tl, TimelineMarker::Kind::receive);
    ASSERT_EQ(receives.size(), 2u);
    EXPECT_EQ(receives[0]->label, "");
    EXPECT_EQ(receives[1]->label, "delivery 2, claimed");
    const auto others = markers_of(tl, TimelineMarker::Kind::other);
    ASSERT_EQ(others.size(), 1u);
    EXPECT_EQ(others[0]->lane, "reaper");
    EXPECT_EQ(others[0]->label, "XAUTOCLAIM 1");
}

TEST(TimelineTest, a_kill_during_a_job_leaves_it_unfinished_and_an_unended_fault_runs_to_the_end) {
    TrialOutcome t;
    t.trial = 1;
    t.history = {
        test::receive(1, 1.0, "C1", "1-0", test::event(42, "created", 1)),
        test::fault(1, 100.0, 1, "invoke", "kill", "C1", "kill C1 mid-job"),
        test::fault(1, 101.0, 1, "ok", "kill", "C1", "kill C1 mid-job"),
        test::fault(1, 200.0, 2, "invoke", "pause", "redis", "SIGSTOP redis"),
        test::receive(1, 301.0, "C1", "1-0", test::event(42, "created", 1)),
        test::rec(1, 302.0, "C1", Op::receive,
                  {{"entry", "1-0"}, {"event", test::event(42, "created", 1)}, {"deliveries", 3}, {"via", "pending"}}),
    };
    const Timeline tl = trial_timeline(t, false);
    EXPECT_EQ(tl.lanes, (std::vector<std::string>{"C1"}));
    const auto jobs = bars_of(tl, "C1", TimelineBar::Kind::job);
    ASSERT_GE(jobs.size(), 1u);
    EXPECT_EQ(jobs[0]->start_ns, ms_ns(1.0));
    EXPECT_EQ(jobs[0]->end_ns, ms_ns(101.0));  // the kill, not the next receive
    EXPECT_TRUE(jobs[0]->unfinished);
    ASSERT_EQ(tl.faults.size(), 2u);
    EXPECT_FALSE(tl.faults[1].ended);
    EXPECT_EQ(tl.faults[1].start_ns, ms_ns(200.0));
    EXPECT_EQ(tl.faults[1].end_ns, ms_ns(302.0));  // still on when the trial ended
    EXPECT_TRUE(markers_of(tl, TimelineMarker::Kind::other).empty());
    const auto receives = markers_of(tl, TimelineMarker::Kind::receive);
    ASSERT_EQ(receives.size(), 3u);
    EXPECT_EQ(receives[2]->label, "delivery 3, from its pending list");
}

}  // namespace timeline_test
}  // namespace relab

