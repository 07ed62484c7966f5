// The simulator's scheduler: virtual time that only it moves, (time, tie) order, fibers that
// suspend and resume, and the same schedule for the same seed. A fiber whose own wake-up is the
// next event, and a request whose server side is (run_next_here), go on without a switch: still
// within run()'s limit, never past a pause, counted as events all the same.
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ports/seeded_rng.h"
#include "sim/scheduler.h"

namespace relab::sim {

namespace sim_scheduler_test {

struct Log {
    std::vector<std::string> entries;
    static void add(void* ctx, uint64_t arg) { static_cast<Log*>(ctx)->entries.push_back(std::to_string(arg)); }
};

// Counts live instances, to show a cancelled fiber's stack objects are destroyed.
struct Guard {
    static inline int live = 0;
    Guard() { ++live; }
    ~Guard() { --live; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
};

std::vector<std::string> tie_order(uint64_t seed) {
    Scheduler s;
    s.reset(Nanos{0}, seed);
    Log log;
    for (uint64_t i = 0; i < 8; ++i) s.at(Nanos{100}, &Log::add, &log, i);
    s.run(Nanos{1'000});
    return log.entries;
}

TEST(SimSchedulerTest, events_run_in_time_order_and_time_moves_only_to_the_next_event) {
    Scheduler s;
    s.reset(Nanos{1'000}, 1);
    Log log;
    s.at(Nanos{3'000}, &Log::add, &log, 3);
    s.at(Nanos{2'000}, &Log::add, &log, 2);
    s.at(Nanos{500}, &Log::add, &log, 1);  // in the past: runs now
    EXPECT_EQ(s.now(), Nanos{1'000});
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::idle);
    EXPECT_EQ(log.entries, (std::vector<std::string>{"1", "2", "3"}));
    EXPECT_EQ(s.now(), Nanos{3'000});
}

TEST(SimSchedulerTest, simultaneous_events_keep_queue_order_without_random_ties) {
    Scheduler s;
    s.reset(Nanos{0}, 1, /*random_ties=*/false);
    Log log;
    for (uint64_t i = 0; i < 5; ++i) s.at(Nanos{10}, &Log::add, &log, i);
    s.run(Nanos{100});
    EXPECT_EQ(log.entries, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
}

TEST(SimSchedulerTest, ties_are_drawn_from_the_seed_same_seed_same_order) {
    // Seed 42's order, computed outside relab: each event's tie is the next xoshiro256** draw
    // (state from splitmix64(42), iterated), events run by ascending tie. Old reports' seeds replay
    // only while this holds.
    EXPECT_EQ(tie_order(42), (std::vector<std::string>{"4", "7", "0", "6", "5", "2", "1", "3"}));
    // reset() reseeds the scheduler it is called on: a reused scheduler repeats the order.
    Scheduler s;
    std::vector<std::vector<std::string>> runs;
    for (int k = 0; k < 2; ++k) {
        s.reset(Nanos{0}, 42);
        Log log;
        for (uint64_t i = 0; i < 8; ++i) s.at(Nanos{100}, &Log::add, &log, i);
        s.run(Nanos{1'000});
        runs.push_back(log.entries);
    }
    EXPECT_EQ(runs[0], tie_order(42));
    EXPECT_EQ(runs[1], tie_order(42));
    bool some_seed_differs = false;
    for (uint64_t seed = 1; seed < 20 && !some_seed_differs; ++seed) some_seed_differs = tie_order(seed) != tie_order(42);
    EXPECT_TRUE(some_seed_differs);
}

// The queue (a heap, and the earliest event beside it): 2,000 events at seeded times, each of the
// first half queueing another while it runs, come out in time order and, at one instant, in the
// order they were queued (no random ties), each exactly once.
struct Chain {
    explicit Chain(Scheduler* sched) : s(sched) {}
    Scheduler* s;
    SeededRng rng{11};
    std::vector<std::pair<int64_t, uint64_t>> ran;  // (time, id)
    uint64_t next_id = 1000;
    static void run(void* ctx, uint64_t id) {
        auto& c = *static_cast<Chain*>(ctx);
        c.ran.emplace_back(c.s->now().count(), id);
        if (id < 1000) c.s->at(c.s->now() + Nanos{c.rng.uniform(0, 50)}, &Chain::run, &c, c.next_id++);
    }
};

TEST(SimSchedulerTest, events_queued_while_others_run_come_out_in_time_then_queue_order) {
    Scheduler s;
    s.reset(Nanos{0}, 1, /*random_ties=*/false);
    Chain c(&s);
    for (uint64_t id = 0; id < 1000; ++id) s.at(Nanos{c.rng.uniform(0, 400)}, &Chain::run, &c, id);
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::idle);
    ASSERT_EQ(c.ran.size(), 2000u);
    std::set<uint64_t> ids;
    for (size_t i = 0; i < c.ran.size(); ++i) {
        ids.insert(c.ran[i].second);
        if (i == 0) continue;
        ASSERT_LE(c.ran[i - 1].first, c.ran[i].first) << "event " << i;
        // At one instant: queue order. Initial events were queued first (ids 0..999 in order),
        // and chained ones in the order their parents ran (ids from 1000 up).
        if (c.ran[i - 1].first == c.ran[i].first && (c.ran[i - 1].second < 1000) == (c.ran[i].second < 1000)) {
            EXPECT_LT(c.ran[i - 1].second, c.ran[i].second) << "event " << i;
        }
    }
    EXPECT_EQ(ids.size(), 2000u);
}

TEST(SimSchedulerTest, an_event_beyond_the_limit_stops_the_run_and_stays_queued) {
    Scheduler s;
    s.reset(Nanos{0}, 1);
    Log log;
    s.at(Nanos{50}, &Log::add, &log, 1);
    s.at(Nanos{500}, &Log::add, &log, 2);
    EXPECT_EQ(s.run(Nanos{100}), Scheduler::Stop::time_limit);
    EXPECT_EQ(log.entries, (std::vector<std::string>{"1"}));
    EXPECT_EQ(s.run(Nanos{1000}), Scheduler::Stop::idle);
    EXPECT_EQ(log.entries, (std::vector<std::string>{"1", "2"}));
}

TEST(SimSchedulerTest, fibers_interleave_by_virtual_time_of_their_sleeps) {
    Scheduler s;
    s.reset(Nanos{0}, 7);
    std::vector<std::string> trace;
    auto sleeper = [&](std::string name, int64_t step) {
        return [&s, &trace, name, step] {
            for (int i = 0; i < 3; ++i) {
                s.sleep_for(Nanos{step});
                trace.push_back(name + "@" + std::to_string(s.now().count()));
            }
        };
    };
    s.spawn("A", sleeper("A", 30), Nanos{0});
    s.spawn("B", sleeper("B", 20), Nanos{0});
    EXPECT_EQ(s.run(Nanos{1'000}), Scheduler::Stop::idle);
    ASSERT_EQ(trace.size(), 6u);
    // A@60 and B@60 tie (the seed orders them); everything else is fixed by time.
    EXPECT_EQ(trace[0], "B@20");
    EXPECT_EQ(trace[1], "A@30");
    EXPECT_EQ(trace[2], "B@40");
    EXPECT_EQ((std::set<std::string>{trace[3], trace[4]}), (std::set<std::string>{"A@60", "B@60"}));
    EXPECT_EQ(trace[5], "A@90");
    EXPECT_EQ(s.unfinished().size(), 0u);
}

TEST(SimSchedulerTest, join_waits_for_the_other_fiber_to_finish) {
    Scheduler s;
    s.reset(Nanos{0}, 1);
    int64_t joined_at = -1;
    const FiberId worker = s.spawn("worker", [&] { s.sleep_for(Nanos{700}); }, Nanos{0});
    s.spawn("waiter", [&] {
        s.join(worker);
        joined_at = s.now().count();
    }, Nanos{0});
    s.run(Nanos{10'000});
    EXPECT_EQ(joined_at, 700);
    EXPECT_TRUE(s.finished(worker));
}

TEST(SimSchedulerTest, a_throwing_fiber_stops_the_run_and_names_itself) {
    Scheduler s;
    s.reset(Nanos{0}, 1);
    s.spawn("bad", [&] {
        s.sleep_for(Nanos{5});
        throw std::runtime_error("boom");
    }, Nanos{0});
    s.spawn("other", [&] { s.sleep_for(Nanos{1'000}); }, Nanos{0});
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::fiber_failed);
    EXPECT_EQ(s.failed_fiber(), "bad");
    try {
        std::rethrow_exception(s.failure());
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "boom");
    }
    EXPECT_EQ(s.unfinished(), std::vector<std::string>{"other"});
    s.cancel_all();
    EXPECT_TRUE(s.unfinished().empty());
}

TEST(SimSchedulerTest, cancel_all_unwinds_suspended_fibers_so_their_objects_are_destroyed) {
    Scheduler s;
    s.reset(Nanos{0}, 1);
    bool swallowed_as_std_exception = false;
    s.spawn("stuck", [&] {
        Guard g;
        try {
            s.suspend();  // nobody wakes it
        } catch (const std::exception&) {
            swallowed_as_std_exception = true;
        }
    }, Nanos{0});
    EXPECT_EQ(s.run(Nanos{100}), Scheduler::Stop::idle);
    EXPECT_EQ(Guard::live, 1);
    EXPECT_EQ(s.unfinished(), std::vector<std::string>{"stuck"});
    s.cancel_all();
    EXPECT_EQ(Guard::live, 0);
    EXPECT_FALSE(swallowed_as_std_exception);
}

TEST(SimSchedulerTest, a_fiber_suspended_inside_a_catch_block_keeps_its_own_current_exception) {
    Scheduler s;
    s.reset(Nanos{0}, 1, false);
    std::string seen_by_a;
    s.spawn("A", [&] {
        try {
            throw std::runtime_error("A's");
        } catch (const std::runtime_error&) {
            s.sleep_for(Nanos{10});  // B throws and catches meanwhile
            try {
                throw;  // rethrows the exception being handled here, A's
            } catch (const std::runtime_error& e) {
                seen_by_a = e.what();
            }
        }
    }, Nanos{0});
    s.spawn("B", [&] {
        try {
            throw std::logic_error("B's");
        } catch (const std::logic_error&) {
            s.sleep_for(Nanos{20});
        }
    }, Nanos{1});
    EXPECT_EQ(s.run(Nanos{1'000}), Scheduler::Stop::idle);
    EXPECT_EQ(seen_by_a, "A's");
}

TEST(SimSchedulerTest, reset_reuses_fiber_stacks_across_runs) {
    Scheduler s;
    for (int run = 0; run < 3; ++run) {
        s.reset(Nanos{0}, static_cast<uint64_t>(run));
        int done = 0;
        for (int i = 0; i < 4; ++i) s.spawn("f" + std::to_string(i), [&, i] {
            s.sleep_for(Nanos{i + 1});
            ++done;
        }, Nanos{0});
        EXPECT_EQ(s.run(Nanos{100}), Scheduler::Stop::idle);
        EXPECT_EQ(done, 4);
    }
}

}  // namespace sim_scheduler_test
}  // namespace relab::sim

namespace relab::sim {
namespace sim_scheduler_test {

// SIGSTOP/SIGCONT on a fiber: a wake-up that comes while it is paused (its sleep ending) is held,
// and it runs at once when resumed, as a process whose sleep ran out while it was stopped.
TEST(SimSchedulerFaultTest, a_paused_fiber_runs_nothing_until_resumed_then_at_once) {
    Scheduler s;
    s.reset(Nanos{0}, 3);
    std::vector<int64_t> woke;
    const FiberId worker = s.spawn("worker", [&] {
        s.sleep_for(Nanos{100});
        woke.push_back(s.now().count());
        s.sleep_for(Nanos{100});
        woke.push_back(s.now().count());
    }, Nanos{0});
    s.spawn("nemesis", [&] {
        s.sleep_for(Nanos{50});
        s.pause(worker);
        s.sleep_for(Nanos{450});  // the worker's sleep ended at 100, while paused
        EXPECT_TRUE(woke.empty());
        s.unpause(worker);
    }, Nanos{0});
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::idle);
    ASSERT_EQ(woke.size(), 2u);
    EXPECT_EQ(woke[0], 500);  // resumed at 500: runs then, not at 100
    EXPECT_EQ(woke[1], 600);
    EXPECT_TRUE(s.unfinished().empty());
}

// Alone, a sleeping fiber's wake-up is always the next event and it never leaves itself; run()'s
// limit still stops it where the limit is, as it stops any event.
TEST(SimSchedulerTest, a_fiber_alone_keeps_to_the_runs_limit_and_counts_its_events) {
    Scheduler s;
    s.reset(Nanos{0}, 5);
    int steps = 0;
    s.spawn("alone", [&] {
        for (int i = 0; i < 10; ++i) {
            s.sleep_for(Nanos{100});
            ++steps;
        }
    }, Nanos{0});
    EXPECT_EQ(s.run(Nanos{450}), Scheduler::Stop::time_limit);
    EXPECT_EQ(steps, 4);
    EXPECT_EQ(s.now(), Nanos{400});
    EXPECT_EQ(s.events_run(), 5u);  // its start and four wake-ups
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::idle);
    EXPECT_EQ(steps, 10);
    EXPECT_EQ(s.now(), Nanos{1'000});
    EXPECT_EQ(s.events_run(), 11u);
}

// A fiber that pauses itself and sleeps: its wake-up is the next event, but it is held until
// the fiber is resumed, as any wake-up of a paused fiber is.
TEST(SimSchedulerFaultTest, a_paused_fibers_own_next_wake_up_is_held) {
    Scheduler s;
    s.reset(Nanos{0}, 6);
    int64_t woke = -1;
    const FiberId worker = s.spawn("worker", [&] {
        s.pause(s.current());
        s.sleep_for(Nanos{100});
        woke = s.now().count();
    }, Nanos{0});
    s.spawn("nemesis", [&] {  // starts after the worker's wake-up at 100: that one is next
        EXPECT_EQ(woke, -1);
        s.unpause(worker);
    }, Nanos{500});
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::idle);
    EXPECT_EQ(woke, 500);
}

struct ServerSide {
    Scheduler* s;
    std::vector<std::string> log;
    static void run(void* ctx, uint64_t arg) {
        auto& me = *static_cast<ServerSide*>(ctx);
        me.log.push_back(std::to_string(arg) + "@" + std::to_string(me.s->now().count()) +
                         (me.s->current() == kNoFiber ? "" : " inside a fiber"));
    }
};

// run_next_here runs a request's server side at once only when it is the next event within the
// run's limit; otherwise it leaves it queued for run(), in its turn.
TEST(SimSchedulerTest, run_next_here_runs_only_the_next_event_outside_any_fiber) {
    Scheduler s;
    s.reset(Nanos{0}, 7);
    ServerSide server{&s, {}};
    std::vector<bool> taken;
    s.at(Nanos{30}, &ServerSide::run, &server, 9);  // someone else's, earlier than the second request
    s.spawn("client", [&] {
        s.at(Nanos{10}, &ServerSide::run, &server, 1);
        taken.push_back(s.run_next_here(&ServerSide::run, &server, 1));
        s.at(Nanos{50}, &ServerSide::run, &server, 2);
        taken.push_back(s.run_next_here(&ServerSide::run, &server, 2));  // 9 at 30 comes first
        s.sleep_for(Nanos{100});
        s.at(Nanos{600}, &ServerSide::run, &server, 3);
        taken.push_back(s.run_next_here(&ServerSide::run, &server, 3));  // beyond the limit
    }, Nanos{0});
    EXPECT_EQ(s.run(Nanos{500}), Scheduler::Stop::time_limit);
    EXPECT_EQ(taken, (std::vector<bool>{true, false, false}));
    EXPECT_EQ(server.log, (std::vector<std::string>{"1@10", "9@30", "2@50"}));
    EXPECT_EQ(s.run(Nanos{1'000}), Scheduler::Stop::idle);
    EXPECT_EQ(server.log.back(), "3@600");
}

// SIGKILL: the fiber never runs its own code again; its stack unwinds when its pending event
// comes, and it counts as finished without an error.
TEST(SimSchedulerFaultTest, a_killed_fiber_never_runs_again_and_fails_nothing) {
    Scheduler s;
    s.reset(Nanos{0}, 4);
    int steps = 0;
    bool unwound = false;
    const FiberId worker = s.spawn("worker", [&] {
        struct Guard {
            bool& flag;
            ~Guard() { flag = true; }
        } guard{unwound};
        for (;;) {
            s.sleep_for(Nanos{10});
            ++steps;
        }
    }, Nanos{0});
    s.spawn("nemesis", [&] {
        s.sleep_for(Nanos{35});
        s.kill(worker);
    }, Nanos{0});
    EXPECT_EQ(s.run(Nanos{10'000}), Scheduler::Stop::idle);
    EXPECT_EQ(steps, 3);
    EXPECT_TRUE(unwound);
    EXPECT_TRUE(s.finished(worker));
    EXPECT_EQ(s.failure(), nullptr);
}

}  // namespace sim_scheduler_test
}  // namespace relab::sim
