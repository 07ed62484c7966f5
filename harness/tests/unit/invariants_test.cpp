// The invariants relab asserts in every build (docs/internals.md, "Invariants"): one test per
// invariant, named after it, that breaks it on purpose through a hand-made history or model state
// and sees the check fire. What each check lets through is tested beside its code.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "check/accounting.h"
#include "engine/invariants.h"
#include "process/proxy_way.h"
#include "sim/event_queue.h"
#include "sim/stream_model.h"

namespace relab {
namespace invariants_test {

// The message of the std::logic_error `f` throws, or "" when it throws none.
template <class F>
std::string logic_error_of(F&& f) {
    try {
        f();
    } catch (const std::logic_error& e) {
        return e.what();
    }
    return "";
}

bool says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

HistoryRecord send(const std::string& actor, int64_t t, const std::string& request, int attempt) {
    return HistoryRecord{1, t, actor, Op::send, {{"request", request}, {"attempt", attempt}}};
}

HistoryRecord answer(const std::string& actor, int64_t t, const std::string& request, int attempt) {
    return HistoryRecord{1, t, actor, Op::answer, {{"request", request}, {"attempt", attempt}, {"code", 201}}};
}

HistoryRecord fault(int64_t t, const std::string& action, const std::string& target, const std::string& phase) {
    return HistoryRecord{1, t, "nemesis", Op::fault,
                         {{"action", action}, {"target", target}, {"fault", 1}, {"phase", phase}}};
}

TEST(Invariant, each_actors_invoke_pairs_with_one_completion) {
    // Legitimate: sequential requests, two clients interleaved, retries, a killed client's open
    // request (and the same name sending again after a restart), one left open at the end.
    EXPECT_FALSE(pairing_violation({send("A", 1, "A#1", 1), send("B", 2, "B#1", 1), answer("A", 3, "A#1", 1),
                                    answer("B", 4, "B#1", 1), send("A", 5, "A#1", 2), answer("A", 6, "A#1", 2),
                                    send("A", 7, "A#2", 1)}));
    EXPECT_FALSE(pairing_violation({send("A", 1, "A#1", 1), fault(2, "restart", "A", "invoke"),
                                    fault(3, "restart", "A", "ok"), send("A", 4, "A#1", 2)}));
    // Broken: a second request while one is open, an answer with no send, an answer to another
    // attempt, and a kill of another actor does not close A's.
    EXPECT_TRUE(pairing_violation({send("A", 1, "A#1", 1), send("A", 2, "A#2", 1)}));
    EXPECT_TRUE(pairing_violation({answer("A", 1, "A#1", 1)}));
    EXPECT_TRUE(pairing_violation({send("A", 1, "A#1", 1), answer("A", 2, "A#1", 2)}));
    EXPECT_TRUE(pairing_violation({send("A", 1, "A#1", 1), fault(2, "kill", "B", "invoke"), fault(3, "kill", "B", "ok"),
                                   send("A", 4, "A#1", 2)}));
    // After a trial, the engine's check names the lab, the trial and the violation (exit 2).
    Scenario s;
    s.id = "idem-lab";
    TrialOutcome t;
    t.trial = 3;
    t.history = {send("A", 1, "A#1", 1), answer("A", 2, "A#9", 1)};
    try {
        check_trial_invariants(s, t);
        ADD_FAILURE() << "no HarnessError";
    } catch (const HarnessError& e) {
        EXPECT_TRUE(says(e.what(), "idem-lab trial 3")) << e.what();
        EXPECT_TRUE(says(e.what(), "A's answer to A#9 (attempt 1) at 2 ns completes no open send")) << e.what();
    }
}

TEST(Invariant, a_groups_last_delivered_never_moves_back) {
    sim::StreamModel::Group g;
    g.last_delivered = sim::EntryId{5, 0};
    g.deliver(sim::EntryId{5, 1}, "c1", Nanos{0});
    EXPECT_EQ(g.last_delivered, (sim::EntryId{5, 1}));
    EXPECT_TRUE(says(logic_error_of([&] { g.deliver(sim::EntryId{3, 0}, "c1", Nanos{1}); }),
                     "a group's last-delivered ID never moves back"));
    EXPECT_EQ(g.last_delivered, (sim::EntryId{5, 1}));
}

TEST(Invariant, a_groups_pel_holds_only_ids_it_delivered) {
    sim::StreamModel::Group g;
    g.last_delivered = sim::EntryId{5, 0};
    g.pel[sim::EntryId{9, 0}] = {"c1", Nanos{0}, 1};  // pending, yet after last-delivered: never delivered
    EXPECT_TRUE(says(logic_error_of([&] { g.deliver(sim::EntryId{6, 0}, "c2", Nanos{1}); }),
                     "the PEL holds only IDs its group delivered"));
    // The model's own reads keep both: every ID pending is one it delivered, in order.
    sim::StreamModel m;
    m.create_group("s", "g", "$", true);
    for (int i = 1; i <= 3; ++i) m.xadd("s", {{"n", std::to_string(i)}}, Nanos{i * 1'000'000});
    EXPECT_EQ(m.xreadgroup("s", "g", "c1", 2, Nanos{0}).size(), 2u);
    EXPECT_EQ(m.xreadgroup("s", "g", "c2", 2, Nanos{0}).size(), 1u);
    EXPECT_EQ(m.pending("s", "g").size(), 3u);
    EXPECT_EQ(m.last_delivered("s", "g"), "3-0");
}

TEST(Invariant, the_schedulers_time_never_moves_back) {
    sim::EventQueue q;
    const auto event = [](int64_t t, uint64_t tie) { return sim::EventQueue::Event{t, tie, nullptr, nullptr, 0}; };
    q.push(event(20, 1));
    q.push(event(10, 2));
    EXPECT_EQ(q.pop().t, 10);
    EXPECT_EQ(q.pop().t, 20);
    // An event queued before the time reached (the scheduler's at() never queues one) would take
    // the clock back.
    q.push(event(15, 3));
    EXPECT_TRUE(says(logic_error_of([&] { q.pop(); }), "the scheduler's time never moves back"));
    // A cleared queue (the scheduler's reset) starts again at any time.
    q.clear();
    q.push(event(1, 4));
    EXPECT_EQ(q.pop().t, 1);
}

TEST(Invariant, a_link_proxys_bytes_leave_in_the_order_they_came) {
    const ProxyClock::time_point now = ProxyClock::now();
    ProxyWay w;
    w.take("GET a\r\n", now, false);
    w.take("GET b\r\n", now, false);
    EXPECT_EQ(w.next_bytes(), "GET a\r\n");
    w.wrote(3);
    EXPECT_EQ(w.next_bytes(), " a\r\n");
    w.wrote(4);
    EXPECT_EQ(w.next_bytes(), "GET b\r\n");
    // A queue whose chunks swapped places would send the later bytes first.
    w.take("GET c\r\n", now, false);
    std::swap(w.queue[0], w.queue[1]);
    EXPECT_TRUE(says(logic_error_of([&] { (void)w.next_bytes(); }), "a link proxy's bytes leave in the order they came"));
}

TEST(Invariant, the_accounting_classes_sum_to_published) {
    Accounting a;
    a.published = 5;
    a.processed_once = 2;
    a.duplicated = 1;
    a.lost = 1;
    a.dead_lettered = 1;
    a.pending = 1;
    a.never_delivered = 1;
    EXPECT_FALSE(published_split_violation(a));
    // Each class of k_published_classes counts: one off by one breaks the sum.
    for (int Accounting::*c : k_published_classes) {
        Accounting b = a;
        ++(b.*c);
        ASSERT_TRUE(published_split_violation(b));
        EXPECT_TRUE(says(*published_split_violation(b), "published 5 is not split into processed_once")) << *published_split_violation(b);
    }
    Accounting negative = a;
    negative.lost = -1;
    negative.processed_once = 3;  // the sum still 5
    EXPECT_TRUE(published_split_violation(negative));
    Accounting left_over = a;
    left_over.never_delivered = 5;  // pending 1 + never delivered 5 > published 5
    EXPECT_TRUE(published_split_violation(left_over));
    // After a trial, the engine's check fires on it (exit 2).
    Scenario s;
    TrialOutcome t;
    t.accounting = negative;
    EXPECT_THROW(check_trial_invariants(s, t), HarnessError);
}

}  // namespace invariants_test
}  // namespace relab
