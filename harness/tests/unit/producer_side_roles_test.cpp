// The producer's retry schedule and the dispatchers' ordering, run on small in-memory ports:
// no server, and a clock that moves only when a role sleeps.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "history/file_history.h"
#include "ports/seeded_rng.h"
#include "roles/roles.h"

namespace relab {
namespace producer_side_roles_test {

class StepClock : public Clock {
public:
    Nanos now() override { return m_now; }
    void sleep_for(Nanos d) override { m_now += d; }
    void advance(Nanos d) { m_now += d; }

private:
    Nanos m_now{0};
};

// Every call to the stream takes 1 ms of the step clock, so records get distinct times.
class LogStream : public Stream {
public:
    explicit LogStream(StepClock& c) : m_clock(c) {}
    std::vector<std::string> xadd(const std::string&, const std::vector<Fields>& batch) override {
        std::vector<std::string> ids;
        for (const auto& f : batch) {
            m_clock.advance(Millis{1});
            ids.push_back(fmt::format("{}-0", m_clock.now() / Millis{1}));
            m_log.push_back(StreamEntry{ids.back(), f});
        }
        return ids;
    }
    std::vector<StreamEntry> xreadgroup(const std::string&, const std::string&, const std::string&, int, Millis) override {
        return {};
    }
    void xack(const std::string&, const std::string&, const std::string&) override {}
    std::vector<StreamEntry> xrange(const std::string&) override { return m_log; }
    void wait_readers_blocked(int, Millis) override {}
    std::vector<std::string> order_types() const {
        std::vector<std::string> out;
        for (const auto& e : m_log) out.push_back(e.field("order") + ":" + e.field("type"));
        return out;
    }

private:
    StepClock& m_clock;
    std::vector<StreamEntry> m_log;
};

class MapKv : public Kv {
public:
    bool set_nx_px(const std::string& k, const std::string& v, Millis) override { return m_keys.emplace(k, v).second; }
    int64_t delete_if_equals(const std::string& k, const std::string& t) override {
        auto it = m_keys.find(k);
        if (it == m_keys.end() || it->second != t) return 0;
        m_keys.erase(it);
        return 1;
    }
    std::string delete_if_equals_method() const override { return "map"; }
    bool exists(const std::string& k) override { return m_keys.count(k) > 0; }

private:
    std::map<std::string, std::string> m_keys;
};

class NoOrders : public OrderStore {
public:
    WriteResult write_state(const OrderWrite&) override { return {}; }
    std::vector<OrderRow> rows() override { return {}; }
};

class VectorOutbox : public Outbox {
public:
    int64_t record_change(int64_t order, const std::string& status, int64_t version) override {
        m_rows.push_back({OutboxRow{static_cast<int64_t>(m_rows.size()) + 1, order, status, version, 0}, false});
        return m_rows.back().first.id;
    }
    std::vector<OutboxRow> unpublished(OutboxOrder order) override {
        std::vector<OutboxRow> out;
        for (const auto& [row, published] : m_rows)
            if (!published) out.push_back(row);
        if (order == OutboxOrder::by_aggregate_then_id)
            std::stable_sort(out.begin(), out.end(),
                             [](const OutboxRow& a, const OutboxRow& b) { return a.aggregate_id < b.aggregate_id; });
        return out;
    }
    void mark_published(int64_t id, const std::string&) override { m_rows.at(id - 1).second = true; }
    void count_failed_attempt(int64_t id) override { ++m_rows.at(id - 1).first.attempts; }

private:
    std::vector<std::pair<OutboxRow, bool>> m_rows;
};

struct Harness {
    StepClock clock;
    SeededRng rng{1};
    LogStream stream{clock};
    MapKv kv;
    NoOrders orders;
    VectorOutbox outbox;
    MemoryHistory history;
    RolePorts ports{clock, rng, stream, kv, orders, outbox, history};
};

Scenario two_orders(DispatchOrder ordering, std::vector<OutboxFailure> failures) {
    Scenario s;
    s.flow().orders = {OrderSpec{42}, OrderSpec{43}};
    s.flow().events = {EventSpec{42, "created", 1, 0}, EventSpec{43, "created", 1, 0}, EventSpec{42, "paid", 2, 0},
                EventSpec{43, "paid", 2, 0}};
    s.flow().consumers = 1;
    s.flow().dispatcher.enabled = true;
    s.flow().dispatcher.ordering = ordering;
    s.flow().dispatcher.poll_ms = 200;
    s.flow().dispatcher.failures = std::move(failures);
    return s;
}

void run_outbox(Harness& h, const Scenario& s) {
    run_source_app(role_settings(s), h.ports, Millis{1000});
    run_dispatcher(role_settings(s), "dispatcher", h.ports, Millis{1000});
}

TEST(DispatcherTest, naive_dispatcher_lets_later_rows_of_the_same_order_overtake_a_failed_one) {
    Harness h;
    run_outbox(h, two_orders(DispatchOrder::naive, {OutboxFailure{1, {1, 2}}}));
    EXPECT_EQ(h.stream.order_types(), (std::vector<std::string>{"43:created", "42:paid", "43:paid", "42:created"}));
}

TEST(DispatcherTest, per_key_dispatcher_holds_back_only_the_failed_rows_order) {
    Harness h;
    run_outbox(h, two_orders(DispatchOrder::per_key, {OutboxFailure{1, {1, 2}}}));
    EXPECT_EQ(h.stream.order_types(), (std::vector<std::string>{"43:created", "43:paid", "42:created", "42:paid"}));
    // Round 1 publishes all of #43; #42's paid waits twice, then goes in round 3 after its created.
    std::vector<std::string> rounds;
    for (const auto& r : h.history.records())
        if (r.op == Op::publish)
            rounds.push_back(fmt::format("{}:{}:{}:{}", r.data["round"].get<int>(), record_event(r)->order,
                                         record_event(r)->type, r.data["result"].get<std::string>()));
    EXPECT_EQ(rounds, (std::vector<std::string>{"1:42:created:fail", "1:42:paid:wait", "1:43:created:ok", "1:43:paid:ok",
                                                "2:42:created:fail", "2:42:paid:wait", "3:42:created:ok",
                                                "3:42:paid:ok"}));
}

TEST(DispatcherTest, without_failures_both_orderings_publish_in_one_round) {
    for (auto ordering : {DispatchOrder::naive, DispatchOrder::per_key}) {
        Harness h;
        run_outbox(h, two_orders(ordering, {}));
        int max_round = 0;
        for (const auto& r : h.history.records())
            if (r.op == Op::publish) max_round = std::max(max_round, r.data["round"].get<int>());
        EXPECT_EQ(max_round, 1);
        EXPECT_EQ(h.stream.order_types().size(), 4u);
    }
}

TEST(DispatcherTest, a_row_that_never_gets_through_stops_at_max_rounds) {
    Harness h;
    Scenario s = two_orders(DispatchOrder::per_key, {OutboxFailure{3, {1, 2, 3, 4, 5}}});
    s.flow().dispatcher.max_rounds = 3;
    run_outbox(h, s);
    EXPECT_EQ(h.stream.order_types(), (std::vector<std::string>{"42:created", "43:created", "43:paid"}));
}

TEST(ProducerTest, a_failed_publish_is_retried_on_doubling_backoff_and_paid_overtakes_it) {
    Harness h;
    Scenario s;
    s.flow().orders = {OrderSpec{42}};
    s.flow().events = {EventSpec{42, "created", 1, 0}, EventSpec{42, "paid", 2, 300}};
    s.flow().consumers = 1;
    s.flow().producer.failures = {PublishFailure{42, "created", {1, 2}, {}}};
    run_producer(role_settings(s), h.ports, Millis{1000});
    EXPECT_EQ(h.stream.order_types(), (std::vector<std::string>{"42:paid", "42:created"}));
    std::vector<std::string> attempts;
    for (const auto& r : h.history.records())
        if (r.op == Op::publish)
            attempts.push_back(fmt::format("{}ms {} #{} {}", r.t_ns / 1'000'000, std::string(record_event(r)->type),
                                           r.data["attempt"].get<int>(), r.data["result"].get<std::string>()));
    // Retries are due 500 and 1000 ms after the first try (backoff 500, doubling).
    EXPECT_EQ(attempts, (std::vector<std::string>{"0ms created #1 fail", "300ms paid #1 ok", "500ms created #2 fail",
                                                  "1000ms created #3 ok"}));
}

TEST(ProducerTest, max_attempts_gives_up_and_the_event_never_reaches_the_stream) {
    Harness h;
    Scenario s;
    s.flow().orders = {OrderSpec{42}};
    s.flow().events = {EventSpec{42, "created", 1, 0}};
    s.flow().consumers = 1;
    s.flow().producer.max_attempts = 2;
    s.flow().producer.failures = {PublishFailure{42, "created", {1, 2}, {}}};
    run_producer(role_settings(s), h.ports, Millis{1000});
    EXPECT_TRUE(h.stream.order_types().empty());
    EXPECT_FALSE(h.history.records().back().data.contains("retry_in_ms"));
}

}  // namespace producer_side_roles_test
}  // namespace relab
