#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/outcome.h"

namespace relab {
namespace checker_test {

using nlohmann::json;

HistoryRecord rec(int64_t t_ns, const std::string& actor, Op op, json data = json::object()) {
    HistoryRecord r;
    r.trial = 1;
    r.t_ns = t_ns;
    r.actor = actor;
    r.op = op;
    r.data = std::move(data);
    return r;
}

json event(int64_t order, const std::string& type, int64_t v) { return {{"order", order}, {"type", type}, {"v", v}}; }

HistoryRecord publish_ok(int64_t t_ns, const std::string& entry, json ev) {
    return rec(t_ns, "P", Op::publish, {{"event", ev}, {"attempt", 1}, {"result", "ok"}, {"entry", entry}});
}

HistoryRecord receive(int64_t t_ns, const std::string& actor, const std::string& entry, json ev) {
    return rec(t_ns, actor, Op::receive, {{"entry", entry}, {"event", ev}});
}

HistoryRecord write(int64_t t_ns, const std::string& actor, json ev, int64_t affected) {
    return rec(t_ns, actor, Op::write,
               {{"event", ev}, {"status", ev["type"]}, {"version", ev["v"]}, {"mode", "plain"}, {"affected", affected},
                {"sql", "UPDATE ..."}});
}

Scenario one_order_scenario() {
    Scenario s;
    s.id = "t";
    s.flow().orders = {OrderSpec{42, "new", 0, "paid"}};
    s.flow().events = {EventSpec{42, "created", 1, 0}, EventSpec{42, "paid", 2, 0}};
    return s;
}

TrialOutcome check(const Scenario& s, std::vector<HistoryRecord> history, std::vector<OrderRow> rows = {{42, "paid", 2}}) {
    return check_trial(s, 1, 99, std::move(history), std::move(rows), {});
}

TEST(CheckerTest, FinalStatusOtherThanExpectedIsWrong) {
    TrialOutcome t = check(one_order_scenario(), {}, {{42, "created", 1}});
    EXPECT_TRUE(t.wrong);
    EXPECT_EQ(t.wrong_orders, std::vector<std::string>{"#42=created (expected paid)"});
    EXPECT_EQ(t.trial, 1);
    EXPECT_EQ(t.seed, 99u);
}

TEST(CheckerTest, ExpectedFinalStatusIsNotWrong) {
    TrialOutcome t = check(one_order_scenario(), {}, {{42, "paid", 2}});
    EXPECT_FALSE(t.wrong);
    EXPECT_TRUE(t.wrong_orders.empty());
    ASSERT_EQ(t.final_rows.size(), 1u);
    EXPECT_EQ(t.final_rows[0].status, "paid");
}

TEST(CheckerTest, MissingRowIsWrong) {
    TrialOutcome t = check(one_order_scenario(), {}, {});
    EXPECT_TRUE(t.wrong);
    EXPECT_EQ(t.wrong_orders, std::vector<std::string>{"#42=(no row) (expected paid)"});
}

TEST(CheckerTest, EachOrderIsJudgedAgainstItsOwnExpectation) {
    Scenario s = one_order_scenario();
    s.flow().orders.push_back(OrderSpec{43, "new", 0, "shipped"});
    TrialOutcome t = check(s, {}, {{43, "shipped", 3}, {42, "created", 1}, {44, "junk", 0}});
    EXPECT_TRUE(t.wrong);
    EXPECT_EQ(t.wrong_orders, std::vector<std::string>{"#42=created (expected paid)"});
}

TEST(CheckerTest, HistoryIsSortedByTimeKeepingTiesInOrder) {
    TrialOutcome t = check(one_order_scenario(),
                           {rec(300, "C1", Op::ack), rec(100, "C1", Op::receive), rec(200, "C2", Op::lock_acquire),
                            rec(200, "C1", Op::write), rec(200, "C2", Op::lock_release), rec(0, "P", Op::start)});
    std::vector<Op> ops;
    for (const auto& r : t.history) ops.push_back(r.op);
    EXPECT_EQ(ops, (std::vector<Op>{Op::start, Op::receive, Op::lock_acquire, Op::write, Op::lock_release, Op::ack}));
}

TEST(CheckerTest, UnmetMatchesAreListed) {
    Scenario s = one_order_scenario();
    s.expect.every_trial.has = {RecordMatch{Op::lock_release, {{"result", 0}}}, RecordMatch{Op::ack}};
    TrialOutcome t = check(s, {rec(10, "C1", Op::lock_release, {{"key", "lock:order:42"}, {"result", 1}}),
                               rec(11, "C1", Op::lock_acquire, {{"result", 0}})});
    EXPECT_EQ(t.unmet, (std::vector<std::string>{"no lock_release with result=0", "no ack"}));

    t = check(s, {rec(10, "C1", Op::lock_release, {{"key", "lock:order:42"}, {"result", 0}, {"method", "DELEX IFEQ"}}),
                  rec(12, "C1", Op::ack, {{"entry", "1-0"}})});
    EXPECT_TRUE(t.unmet.empty());
}

TEST(CheckerTest, MatchComparesNestedObjectsAsJson) {
    Scenario s = one_order_scenario();
    s.expect.every_trial.has = {RecordMatch{Op::write, {{"event", event(42, "paid", 2)}, {"affected", 1}}}};
    EXPECT_TRUE(check(s, {write(10, "C1", event(42, "paid", 2), 1)}).unmet.empty());
    EXPECT_EQ(check(s, {write(10, "C1", event(42, "paid", 3), 1)}).unmet.size(), 1u);
    EXPECT_EQ(check(s, {write(10, "C1", event(42, "paid", 2), 0)}).unmet.size(), 1u);
    EXPECT_EQ(check(s, {rec(10, "C1", Op::write, {{"affected", 1}})}).unmet.size(), 1u);  // field absent
}

TEST(CheckerTest, LostEntriesArePublishedButNeverProcessed) {
    // 1-1 is received but its job never wrote; 3-0 is never even received; the failed publish
    // was never acknowledged, so it is not owed.
    TrialOutcome t = check(one_order_scenario(),
                           {publish_ok(10, "1-0", event(42, "created", 1)), publish_ok(10, "1-1", event(42, "paid", 2)),
                            publish_ok(20, "2-0", event(42, "paid", 3)), publish_ok(25, "3-0", event(42, "shipped", 4)),
                            rec(30, "P", Op::publish, {{"event", event(42, "x", 5)}, {"attempt", 1}, {"result", "fail"}}),
                            receive(40, "C1", "1-0", event(42, "created", 1)), write(45, "C1", event(42, "created", 1), 1),
                            receive(50, "C2", "2-0", event(42, "paid", 3)), write(55, "C2", event(42, "paid", 3), 1),
                            receive(60, "C1", "1-1", event(42, "paid", 2))});
    EXPECT_EQ(t.accounting.published, 4);
    EXPECT_EQ(t.accounting.lost, 2);
    EXPECT_EQ(t.accounting.lost_examples, (std::vector<std::string>{"1-1", "3-0"}));
    EXPECT_EQ(t.accounting.processed_once, 2);

    t = check(one_order_scenario(), {publish_ok(10, "1-0", event(42, "created", 1)),
                                     receive(40, "C1", "1-0", event(42, "created", 1)),
                                     write(50, "C1", event(42, "created", 1), 0)});
    EXPECT_EQ(t.accounting.lost, 0);
    EXPECT_EQ(t.accounting.processed_once, 1);
}

TEST(CheckerTest, DuplicatedCountsEntriesWhoseJobRanTwiceWhateverItWrote) {
    // created's entry is written three times (by two consumers), paid's twice, the second refused
    // by a CAS (affected 0): the job still ran twice.
    TrialOutcome t = check(one_order_scenario(),
                           {publish_ok(1, "1-0", event(42, "created", 1)), publish_ok(1, "1-1", event(42, "paid", 2)),
                            receive(5, "C1", "1-0", event(42, "created", 1)), write(10, "C1", event(42, "created", 1), 1),
                            receive(15, "C2", "1-0", event(42, "created", 1)), write(20, "C2", event(42, "created", 1), 1),
                            write(30, "C2", event(42, "created", 1), 1),
                            receive(35, "C1", "1-1", event(42, "paid", 2)), write(40, "C1", event(42, "paid", 2), 0),
                            receive(45, "C2", "1-1", event(42, "paid", 2)), write(50, "C2", event(42, "paid", 2), 1)});
    EXPECT_EQ(t.accounting.duplicated, 2);
    EXPECT_EQ(t.accounting.duplicated_examples, (std::vector<std::string>{"1-0", "1-1"}));
    EXPECT_EQ(t.accounting.processed_once, 0);
    EXPECT_EQ(t.accounting.stale_overwrites, 0);
}

TEST(CheckerTest, ReorderedCountsOlderVersionsAppliedAfterNewerPerOrder) {
    // paid v2 lands first, then created v1 overwrites it: the article's bug.
    TrialOutcome t = check(one_order_scenario(),
                           {write(816'000'000, "C1", event(42, "created", 1), 1),
                            write(111'000'000, "C2", event(42, "paid", 2), 1)},
                           {{42, "created", 1}});
    EXPECT_EQ(t.accounting.stale_overwrites, 1);
    EXPECT_EQ(t.accounting.stale_examples, std::vector<std::string>{"created overwrote paid (#42)"});
    EXPECT_TRUE(t.wrong);

    // In order, a rejected (affected 0) stale write, and another order's lower versions: none count.
    t = check(one_order_scenario(),
              {write(10, "C1", event(42, "created", 1), 1), write(20, "C2", event(42, "paid", 3), 1),
               write(30, "C1", event(42, "shipped", 2), 0), write(40, "C1", event(7, "created", 1), 1)});
    EXPECT_EQ(t.accounting.stale_overwrites, 0);
}

TEST(CheckerTest, DeliveryLatencyMedianAndMaxOverTrials) {
    TrialOutcome a = check(one_order_scenario(),
                           {publish_ok(1'000'000, "1-0", event(42, "created", 1)),
                            publish_ok(1'000'000, "1-1", event(42, "paid", 2)),
                            receive(3'000'000, "C1", "1-0", event(42, "created", 1)),  // 2000 us
                            receive(1'500'000, "C2", "1-1", event(42, "paid", 2)),     // 500 us
                            receive(9'000'000, "C2", "1-0", event(42, "created", 1)),  // redelivery: ignored
                            receive(9'500'000, "C2", "9-9", event(42, "paid", 9))});   // never published ok
    // Trial 2 reuses entry id 1-0 for a different publication: ids are per trial.
    TrialOutcome b = check(one_order_scenario(),
                           {publish_ok(0, "1-0", event(42, "created", 1)), publish_ok(0, "1-1", event(42, "paid", 2)),
                            receive(4'000'999, "C1", "1-0", event(42, "created", 1)),  // 4000 us
                            receive(1'000'000, "C2", "1-1", event(42, "paid", 2))});  // 1000 us
    LatencyStats stats = delivery_latency({a, b});
    EXPECT_EQ(stats.samples, 4);
    EXPECT_EQ(stats.p50_us, 1000);  // lower median of 500, 1000, 2000, 4000
    EXPECT_EQ(stats.max_us, 4000);

    stats = delivery_latency({a});
    EXPECT_EQ(stats.samples, 2);
    EXPECT_EQ(stats.p50_us, 500);
    EXPECT_EQ(stats.max_us, 2000);

    stats = delivery_latency({});
    EXPECT_EQ(stats.samples, 0);
    EXPECT_EQ(stats.max_us, 0);
}

TEST(CheckerTest, DeliveryLatencyIgnoresEntriesPickedUpByABusyConsumer) {
    // S1: paid is added while C1 still works on created; its late pickup is queueing, not delivery.
    TrialOutcome t = check(one_order_scenario(),
                           {publish_ok(0, "1-0", event(42, "created", 1)),
                            publish_ok(100'000, "1-1", event(42, "paid", 2)),
                            receive(200'000, "C1", "1-0", event(42, "created", 1)),  // idle: 200 us
                            write(800'000'000, "C1", event(42, "created", 1), 1),
                            rec(800'100'000, "C1", Op::ack, {{"entry", "1-0"}}),
                            receive(800'200'000, "C1", "1-1", event(42, "paid", 2))});
    const LatencyStats stats = delivery_latency({t});
    EXPECT_EQ(stats.samples, 1);
    EXPECT_EQ(stats.max_us, 200);
}

LabResult workload_lab(Expectation::Count count, int n, int trials, int wrong_trials) {
    LabResult lab;
    lab.scenario = one_order_scenario();
    lab.scenario.expect.wrong = count;
    lab.scenario.expect.n = n;
    for (int i = 1; i <= trials; ++i) {
        TrialOutcome t;
        t.trial = i;
        t.wrong = i <= wrong_trials;
        lab.trials.push_back(t);
    }
    return lab;
}

TEST(CheckerTest, SummarizeWorkloadForEachCountKind) {
    struct Case {
        Expectation::Count count;
        int n, trials, wrong;
        bool held;
        std::string failure;
    };
    const std::vector<Case> cases = {
        {Expectation::Count::all, 0, 10, 10, true, ""},
        {Expectation::Count::all, 0, 10, 7, false, "expected wrong = all, measured 7/10"},
        {Expectation::Count::none, 0, 10, 0, true, ""},
        {Expectation::Count::none, 0, 10, 1, false, "expected wrong = none, measured 1/10"},
        {Expectation::Count::at_least, 1, 20, 3, true, ""},
        {Expectation::Count::at_least, 1, 20, 0, false, "expected wrong >= 1, measured 0/20"},
        {Expectation::Count::at_most, 2, 20, 2, true, ""},
        {Expectation::Count::at_most, 2, 20, 3, false, "expected wrong <= 2, measured 3/20"},
        {Expectation::Count::exactly, 3, 20, 3, true, ""},
        {Expectation::Count::exactly, 3, 20, 4, false, "expected wrong = 3, measured 4/20"},
    };
    for (const auto& c : cases) {
        LabResult lab = workload_lab(c.count, c.n, c.trials, c.wrong);
        summarize(lab);
        EXPECT_EQ(lab.total, c.trials);
        EXPECT_EQ(lab.wrong, c.wrong);
        EXPECT_EQ(lab.held, c.held) << c.failure;
        if (c.held)
            EXPECT_TRUE(lab.failures.empty());
        else
            EXPECT_EQ(lab.failures, std::vector<std::string>{c.failure});
    }
}

// The count's failure names the count alone: what the lab lets appear is no part of it.
TEST(CheckerTest, the_count_failure_leaves_out_what_may_appear) {
    LabResult lab = workload_lab(Expectation::Count::all, 0, 1, 0);
    lab.scenario.expect.may_appear = {{"redelivered", "in flight when the replica stopped"}};
    summarize(lab);
    EXPECT_EQ(lab.failures, std::vector<std::string>{"expected wrong = all, measured 0/1"});
}

TEST(CheckerTest, SummarizeFailsOnUnmetMatchesEvenWhenCountHolds) {
    LabResult lab = workload_lab(Expectation::Count::none, 0, 3, 0);
    lab.scenario.expect.every_trial.has = {RecordMatch{Op::lock_release, {{"result", 0}}}};
    lab.trials[2].unmet = {"no lock_release with result=0"};
    summarize(lab);
    EXPECT_FALSE(lab.held);
    EXPECT_EQ(lab.failures, std::vector<std::string>{"trial 3: no lock_release with result=0"});
}

TEST(CheckerTest, SummarizeWithoutTrialsDoesNotHold) {
    LabResult lab = workload_lab(Expectation::Count::none, 0, 0, 0);
    summarize(lab);
    EXPECT_FALSE(lab.held);
    EXPECT_EQ(lab.failures, std::vector<std::string>{"no trial ran"});
}

TEST(CheckerTest, SummarizeSkippedLabNeitherHoldsNorFails) {
    LabResult lab = workload_lab(Expectation::Count::all, 0, 0, 0);
    lab.skipped = true;
    lab.skip_reason = "needs Redis 8.2";
    summarize(lab);
    EXPECT_FALSE(lab.held);
    EXPECT_TRUE(lab.failures.empty());
}

TEST(CheckerTest, SummarizeFillsDeliveryLatency) {
    LabResult lab = workload_lab(Expectation::Count::none, 0, 0, 0);
    lab.trials.push_back(check(one_order_scenario(), {publish_ok(0, "1-0", event(42, "paid", 2)),
                                                      receive(2'000'000, "C1", "1-0", event(42, "paid", 2))}));
    summarize(lab);
    EXPECT_TRUE(lab.held);
    EXPECT_EQ(lab.delivery.samples, 1);
    EXPECT_EQ(lab.delivery.p50_us, 2000);
    EXPECT_EQ(lab.delivery.max_us, 2000);
}

StepOutcome step(const std::string& session, const std::string& sql, bool ok, const std::string& failure = "") {
    StepOutcome s;
    s.session = session;
    s.sql = sql;
    s.ok = ok;
    s.failure = failure;
    return s;
}

TEST(CheckerTest, SummarizeSessionsCountsWrongCasesAndFailingSteps) {
    LabResult lab;
    lab.scenario.set_kind(LabKind::sessions);
    lab.scenario.expect.wrong = Expectation::Count::none;
    CaseOutcome first;
    first.steps = {step("A", "BEGIN", true), step("B", "SELECT 1", true)};
    CaseOutcome second;
    second.steps = {step("A", "BEGIN", true),
                    step("B", "UPDATE tmp_orders SET status = 'created'", false, "expected UPDATE 0, got UPDATE 1")};
    lab.cases = {first, second};

    summarize(lab);
    EXPECT_EQ(lab.total, 2);
    EXPECT_EQ(lab.wrong, 0);
    EXPECT_FALSE(lab.held);
    EXPECT_EQ(lab.failures, std::vector<std::string>{
                                "case 2, session B, step 'UPDATE tmp_orders SET status = 'created'': expected UPDATE 0, "
                                "got UPDATE 1"});

    lab.cases[1].steps[1].ok = true;
    lab.cases[1].wrong = true;
    summarize(lab);
    EXPECT_EQ(lab.wrong, 1);
    EXPECT_FALSE(lab.held);
    EXPECT_EQ(lab.failures, std::vector<std::string>{"expected wrong = none, measured 1/2"});

    lab.scenario.expect.wrong = Expectation::Count::exactly;
    lab.scenario.expect.n = 1;
    summarize(lab);
    EXPECT_TRUE(lab.held);
    EXPECT_TRUE(lab.failures.empty());
}

TEST(CheckerTest, AllHeldNeedsEveryLab) {
    RunReport run;
    EXPECT_TRUE(run.all_held());
    LabResult held;
    held.held = true;
    run.labs = {held, held};
    EXPECT_TRUE(run.all_held());
    LabResult failed;
    failed.held = false;
    run.labs.push_back(failed);
    EXPECT_FALSE(run.all_held());
}

TEST(CheckerTest, a_skipped_lab_is_neither_held_nor_broken) {
    LabResult lab;
    lab.scenario.expect.wrong = Expectation::Count::none;  // would hold on 0/0 if it were counted
    lab.skipped = true;
    lab.skip_reason = "XADD IDMP needs Redis 8.6";
    lab.held = true;  // whatever a backend left there
    summarize(lab);
    EXPECT_FALSE(lab.held);
    EXPECT_TRUE(lab.skipped);
    EXPECT_TRUE(lab.failures.empty());
    EXPECT_EQ(lab.total, 0);

    // A run of one held lab and one skipped lab: none broke.
    LabResult held;
    held.held = true;
    RunReport run;
    run.labs = {held, lab};
    EXPECT_TRUE(run.all_held());
}

}  // namespace checker_test
}  // namespace relab
