// The stream labs' accounting (check/accounting.h), from histories built by hand, and the
// expectation terms that read it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "check/accounting.h"
#include "check/outcome.h"
#include "scenario/terms.h"

namespace relab {
namespace accounting_test {

using nlohmann::json;

HistoryRecord rec(int64_t t_ns, const std::string& actor, Op op, json data = json::object()) {
    return HistoryRecord{1, t_ns, actor, op, std::move(data)};
}

json event(int64_t order, const std::string& type, int64_t v) { return {{"order", order}, {"type", type}, {"v", v}}; }

HistoryRecord publish(int64_t t, const std::string& entry, json ev, const std::string& result = "ok") {
    json d = {{"event", ev}, {"attempt", 1}, {"result", result}};
    if (result == "ok") d["entry"] = entry;
    return rec(t, "producer", Op::publish, std::move(d));
}

HistoryRecord receive(int64_t t, const std::string& actor, const std::string& entry, json ev, int deliveries = 1,
                      const std::string& via = "new") {
    return rec(t, actor, Op::receive, {{"entry", entry}, {"event", ev}, {"deliveries", deliveries}, {"via", via}});
}

// A write as the lead's roles record it: with the entry it processed.
HistoryRecord write(int64_t t, const std::string& actor, const std::string& entry, json ev, int64_t affected) {
    return rec(t, actor, Op::write,
               {{"entry", entry}, {"event", ev}, {"status", ev["type"]}, {"mode", "plain"}, {"affected", affected},
                {"sql", "UPDATE ..."}});
}

// A write as relab recorded it before writes named their entry.
HistoryRecord old_write(int64_t t, const std::string& actor, json ev, int64_t affected) {
    return rec(t, actor, Op::write,
               {{"event", ev}, {"status", ev["type"]}, {"mode", "plain"}, {"affected", affected}, {"sql", "UPDATE ..."}});
}

HistoryRecord ack(int64_t t, const std::string& actor, const std::string& entry) {
    return rec(t, actor, Op::ack, {{"entry", entry}});
}

// The loader knows the anomaly classes without the check layer ("may_appear" names them): both lists
// say the same.
TEST(AccountingTest, the_classes_may_appear_takes_are_the_anomalies_the_accounting_flags) {
    std::vector<std::string_view> flagged;
    for (const AccountingFigure& f : accounting_figures())
        if (f.flag == AccountingFlag::anomaly) flagged.push_back(f.name);
    const auto classes = anomaly_classes();
    EXPECT_EQ(flagged, std::vector<std::string_view>(classes.begin(), classes.end()));
}

TEST(AccountingTest, a_clean_run_processes_every_published_entry_once) {
    const Accounting a = account({publish(1, "1-0", event(42, "created", 1)), publish(1, "1-1", event(42, "paid", 2)),
                                  receive(2, "C1", "1-0", event(42, "created", 1)),
                                  write(3, "C1", "1-0", event(42, "created", 1), 1), ack(4, "C1", "1-0"),
                                  receive(5, "C1", "1-1", event(42, "paid", 2)),
                                  write(6, "C1", "1-1", event(42, "paid", 2), 1), ack(7, "C1", "1-1")});
    EXPECT_EQ(a.published, 2);
    EXPECT_EQ(a.processed_once, 2);
    EXPECT_TRUE(a.clean());
    EXPECT_EQ(accounting_text(a),
              "2 published · 2 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 0 "
              "stale overwrites");
    EXPECT_TRUE(accounting_details(a).empty());
}

TEST(AccountingTest, a_job_that_ran_twice_is_duplicated_even_when_its_second_write_changed_nothing) {
    // C1 was killed after its write but before its ack; XAUTOCLAIM gave the entry to C2, whose CAS
    // was refused (affected 0): the job still ran twice.
    const Accounting a = account({publish(1, "1-0", event(42, "paid", 2)), receive(2, "C1", "1-0", event(42, "paid", 2)),
                                  write(3, "C1", "1-0", event(42, "paid", 2), 1),
                                  rec(4, "reaper", Op::claim, {{"claimed", {"1-0"}}, {"deleted", json::array()}, {"min_idle_ms", 100}}),
                                  receive(5, "C2", "1-0", event(42, "paid", 2), 2, "claim"),
                                  write(6, "C2", "1-0", event(42, "paid", 2), 0), ack(7, "C2", "1-0")});
    EXPECT_EQ(a.published, 1);
    EXPECT_EQ(a.duplicated, 1);
    EXPECT_EQ(a.processed_once, 0);
    EXPECT_EQ(a.duplicated_examples, std::vector<std::string>{"1-0"});
    EXPECT_EQ(a.redelivered, 0);  // claimed from the pending list: it was never acked
    EXPECT_EQ(accounting_details(a), std::vector<std::string>{"duplicated 1: 1-0"});
}

// P4: an entry processed once whose only write a version check refused is unapplied; one whose
// second write (a redelivery) changed the row is not; a lost one is lost, not unapplied.
TEST(AccountingTest, an_entry_whose_every_write_changed_nothing_is_unapplied) {
    const Accounting a = account({publish(1, "1-0", event(42, "created", 1)), publish(1, "1-1", event(42, "paid", 2)),
                                  publish(1, "1-2", event(42, "shipped", 3)), publish(1, "1-3", event(43, "created", 1)),
                                  write(3, "C1", "1-0", event(42, "created", 1), 1),
                                  write(4, "C1", "1-2", event(42, "shipped", 3), 1),
                                  write(5, "C2", "1-1", event(42, "paid", 2), 0),
                                  write(6, "C2", "1-3", event(43, "created", 1), 0),
                                  write(7, "C1", "1-3", event(43, "created", 1), 1)});
    EXPECT_EQ(a.unapplied, 1);
    EXPECT_EQ(a.unapplied_examples, std::vector<std::string>{"1-1"});
    EXPECT_EQ(a.duplicated, 1);  // 1-3, written twice
    EXPECT_EQ(a.lost, 0);
    const Accounting lost = account({publish(1, "1-0", event(42, "created", 1))});
    EXPECT_EQ(lost.lost, 1);
    EXPECT_EQ(lost.unapplied, 0);
}

TEST(AccountingTest, a_published_entry_never_written_is_lost_and_a_failed_publish_is_not_owed) {
    const Accounting a =
        account({publish(1, "1-0", event(42, "created", 1)), publish(2, "", event(42, "paid", 2), "fail"),
                 publish(3, "3-0", event(42, "paid", 2)), receive(4, "C1", "1-0", event(42, "created", 1)),
                 receive(5, "C2", "3-0", event(42, "paid", 2)), write(6, "C2", "3-0", event(42, "paid", 2), 1)});
    EXPECT_EQ(a.published, 2);
    EXPECT_EQ(a.lost, 1);  // received, but its consumer never wrote
    EXPECT_EQ(a.lost_examples, std::vector<std::string>{"1-0"});
    EXPECT_EQ(a.processed_once, 1);
    EXPECT_EQ(a.published, a.processed_once + a.duplicated + a.lost);
}

TEST(AccountingTest, a_receive_after_an_ack_of_the_same_entry_is_a_redelivery_after_ack) {
    const Accounting a = account({publish(1, "1-0", event(42, "paid", 2)), receive(2, "C1", "1-0", event(42, "paid", 2)),
                                  write(3, "C1", "1-0", event(42, "paid", 2), 1), ack(4, "C1", "1-0"),
                                  receive(9, "C1", "1-0", event(42, "paid", 2), 2, "pending"),
                                  receive(10, "C2", "1-0", event(42, "paid", 2), 3, "claim")});
    EXPECT_EQ(a.redelivered, 1);  // one entry, however often it came back
    EXPECT_EQ(a.redelivered_examples, std::vector<std::string>{"1-0"});
    EXPECT_EQ(a.processed_once, 1);  // redelivered, but not processed again
    EXPECT_EQ(accounting_details(a), std::vector<std::string>{"redelivered after ack 1: 1-0"});

    // A redelivery before the ack (a claim of a pending entry) is not one.
    const Accounting b = account({publish(1, "1-0", event(42, "paid", 2)), receive(2, "C1", "1-0", event(42, "paid", 2)),
                                  receive(5, "C2", "1-0", event(42, "paid", 2), 2, "claim"),
                                  write(6, "C2", "1-0", event(42, "paid", 2), 1), ack(7, "C2", "1-0")});
    EXPECT_EQ(b.redelivered, 0);
}

TEST(AccountingTest, entries_no_ok_publish_produced_are_unexpected) {
    const Accounting a = account({publish(1, "1-0", event(42, "paid", 2)), receive(2, "C1", "1-0", event(42, "paid", 2)),
                                  write(3, "C1", "1-0", event(42, "paid", 2), 1),
                                  receive(4, "C1", "9-9", event(42, "shipped", 3)),  // received, never published
                                  write(5, "C1", "9-9", event(42, "shipped", 3), 1),
                                  write(6, "C2", "8-8", event(42, "refunded", 4), 1)});  // written only
    EXPECT_EQ(a.unexpected, 2);
    EXPECT_EQ(a.unexpected_examples, (std::vector<std::string>{"9-9", "8-8"}));
    EXPECT_EQ(a.published, 1);
    EXPECT_EQ(a.processed_once, 1);
}

TEST(AccountingTest, a_write_without_an_entry_is_the_job_of_what_its_actor_received) {
    // Histories before writes named their entry. The same event was published twice (two entries):
    // each consumer's write belongs to the entry it received, so neither entry is lost.
    const Accounting a = account({publish(1, "1-0", event(42, "paid", 2)), publish(2, "2-0", event(42, "paid", 2)),
                                  rec(3, "C1", Op::receive, {{"entry", "1-0"}, {"event", event(42, "paid", 2)}}),
                                  rec(3, "C2", Op::receive, {{"entry", "2-0"}, {"event", event(42, "paid", 2)}}),
                                  old_write(4, "C2", event(42, "paid", 2), 1), old_write(5, "C1", event(42, "paid", 2), 1)});
    EXPECT_EQ(a.processed_once, 2);
    EXPECT_EQ(a.lost, 0);
    EXPECT_EQ(a.duplicated, 0);

    // Without a matching receive it is the job of the event's first publish.
    const Accounting b = account({publish(1, "1-0", event(42, "paid", 2)), old_write(4, "C1", event(42, "paid", 2), 1),
                                  old_write(5, "C1", event(42, "created", 1), 1)});
    EXPECT_EQ(b.processed_once, 1);
    EXPECT_EQ(b.unexpected, 1);  // created was never published
    EXPECT_EQ(b.unexpected_examples, std::vector<std::string>{"(no entry) #42 created v=1"});
}

TEST(AccountingTest, stale_overwrites_are_applied_older_versions_after_newer_ones_in_time_order) {
    // Recorded out of time order: created's write (t=816) lands after paid's (t=111).
    const std::vector<HistoryRecord> h = {publish(0, "1-0", event(42, "created", 1)), publish(0, "1-1", event(42, "paid", 2)),
                                          write(816, "C1", "1-0", event(42, "created", 1), 1),
                                          write(111, "C2", "1-1", event(42, "paid", 2), 1)};
    const Accounting a = account(h);
    EXPECT_EQ(a.stale_overwrites, 1);
    EXPECT_EQ(a.stale_examples, std::vector<std::string>{"created overwrote paid (#42)"});
    ASSERT_EQ(stale_overwrites(h).size(), 1u);
    EXPECT_EQ(stale_overwrites(h)[0].by, "created");
    EXPECT_EQ(accounting_details(a), std::vector<std::string>{"stale overwrite 1: created overwrote paid (#42)"});
    EXPECT_EQ(accounting_text(a),
              "2 published · 2 processed once · 0 duplicated · 0 lost · 0 redelivered after ack · 0 unexpected · 1 "
              "stale overwrite");

    // A refused CAS (affected 0) overwrote nothing.
    const Accounting b = account({write(111, "C2", "1-1", event(42, "paid", 2), 1),
                                  write(816, "C1", "1-0", event(42, "created", 1), 0)});
    EXPECT_EQ(b.stale_overwrites, 0);
}

TEST(AccountingTest, only_the_first_examples_are_kept_and_sums_add_counts) {
    std::vector<HistoryRecord> h;
    for (int i = 0; i < 5; ++i) h.push_back(publish(i, std::to_string(i) + "-0", event(42, "paid", i)));
    const Accounting a = account(h);
    EXPECT_EQ(a.lost, 5);
    EXPECT_EQ(a.lost_examples, (std::vector<std::string>{"0-0", "1-0", "2-0"}));
    EXPECT_EQ(accounting_details(a), std::vector<std::string>{"lost 5: 0-0, 1-0, 2-0, …"});

    Accounting total;
    total += a;
    total += a;
    EXPECT_EQ(total.published, 10);
    EXPECT_EQ(total.lost, 10);
    EXPECT_TRUE(total.lost_examples.empty());  // examples are a trial's own
}

// Past a handful of entries the accounting looks its keys up in a hash index rather than a list:
// the same counts, the same examples in the same order. 40 orders × (created, paid): order 25's
// paid written twice, order 30's never, order 35's created received again after its ack, and
// both events of order 38 published twice (a republish, each copy written).
TEST(AccountingTest, a_history_of_many_entries_is_counted_as_a_small_one) {
    std::vector<HistoryRecord> h;
    int64_t t = 0;
    auto id = [](int order, int k) { return std::to_string(1000 + order) + "-" + std::to_string(k); };
    for (int order = 1; order <= 40; ++order)
        for (int k = 0; k < 2; ++k) {
            const json ev = event(order, k == 0 ? "created" : "paid", k + 1);
            h.push_back(publish(++t, id(order, k), ev));
            if (order == 38) h.push_back(publish(++t, id(order, k + 2), ev));
        }
    for (int order = 1; order <= 40; ++order)
        for (int k = 0; k < 2; ++k) {
            const json ev = event(order, k == 0 ? "created" : "paid", k + 1);
            if (order == 30 && k == 1) continue;
            h.push_back(receive(++t, "C1", id(order, k), ev));
            h.push_back(write(++t, "C1", id(order, k), ev, 1));
            if (order == 25 && k == 1) h.push_back(write(++t, "C2", id(order, k), ev, 0));
            h.push_back(ack(++t, "C1", id(order, k)));
            if (order == 35 && k == 0) h.push_back(receive(++t, "C2", id(order, k), ev, 2, "claim"));
            if (order == 38) {
                h.push_back(write(++t, "C1", id(order, k + 2), ev, 0));
                h.push_back(ack(++t, "C1", id(order, k + 2)));
            }
        }
    const Accounting a = account(h);
    EXPECT_EQ(a.published, 82);
    EXPECT_EQ(a.duplicated, 1);
    EXPECT_EQ(a.duplicated_examples, std::vector<std::string>{"1025-1"});
    EXPECT_EQ(a.lost, 1);
    EXPECT_EQ(a.lost_examples, std::vector<std::string>{"1030-1"});
    EXPECT_EQ(a.processed_once, 80);
    EXPECT_EQ(a.redelivered, 1);
    EXPECT_EQ(a.redelivered_examples, std::vector<std::string>{"1035-0"});
    EXPECT_EQ(a.unexpected, 0);
    // Order 38's second copies only ever changed nothing: unapplied, as the first copies were not.
    EXPECT_EQ(a.unapplied, 2);
    EXPECT_EQ(a.unapplied_examples, (std::vector<std::string>{"1038-2", "1038-3"}));
    EXPECT_EQ(a.republished, 2);
    EXPECT_EQ(a.republished_examples, (std::vector<std::string>{"#38 created v1 ×2", "#38 paid v2 ×2"}));
    // Written again: order 25's paid (two jobs of one entry) and order 38's events (two entries each).
    EXPECT_EQ(a.reapplied, 3);
    EXPECT_EQ(a.reapplied_examples, (std::vector<std::string>{"#25 paid v2 ×2", "#38 created v1 ×2", "#38 paid v2 ×2"}));
}

// The per-event examples list events by (order, type, version), whichever was published first.
TEST(AccountingTest, per_event_examples_come_in_event_order) {
    const Accounting a = account({publish(1, "1-0", event(9, "paid", 2)), publish(2, "2-0", event(9, "paid", 2)),
                                  publish(3, "3-0", event(2, "paid", 2)), publish(4, "4-0", event(2, "paid", 2)),
                                  publish(5, "5-0", event(2, "created", 1)), publish(6, "6-0", event(2, "created", 1))});
    EXPECT_EQ(a.republished_examples,
              (std::vector<std::string>{"#2 created v1 ×2", "#2 paid v2 ×2", "#9 paid v2 ×2"}));
}

// S2's shards: two streams can hand out the same ID. Entries are told apart by their stream, and
// the examples name it.
TEST(AccountingTest, the_same_id_in_two_streams_is_two_entries) {
    auto on = [](HistoryRecord r, const std::string& stream) {
        r.data["stream"] = stream;
        return r;
    };
    const Accounting a = account({on(publish(1, "5-0", event(1, "created", 1)), "orders:{q0}"),
                                  on(publish(2, "5-0", event(2, "created", 1)), "orders:{q1}"),
                                  on(receive(3, "C1", "5-0", event(1, "created", 1)), "orders:{q0}"),
                                  on(write(4, "C1", "5-0", event(1, "created", 1), 1), "orders:{q0}"),
                                  on(ack(5, "C1", "5-0"), "orders:{q0}")});
    EXPECT_EQ(a.published, 2);
    EXPECT_EQ(a.processed_once, 1);
    EXPECT_EQ(a.lost, 1);
    EXPECT_EQ(a.lost_examples, std::vector<std::string>{"orders:{q1} 5-0"});
    EXPECT_EQ(a.unexpected, 0);
}

Scenario one_order() {
    Scenario s;
    s.id = "t";
    s.flow().orders = {OrderSpec{42, "new", 0, "paid"}};
    return s;
}

// A trial where C1 wrote paid, was killed before its ack, and C2 claimed and wrote it again.
std::vector<HistoryRecord> claimed_twice() {
    return {publish(1, "1-0", event(42, "paid", 2)), receive(2, "C1", "1-0", event(42, "paid", 2)),
            write(3, "C1", "1-0", event(42, "paid", 2), 1), receive(5, "C2", "1-0", event(42, "paid", 2), 2, "claim"),
            write(6, "C2", "1-0", event(42, "paid", 2), 1), ack(7, "C2", "1-0")};
}

TEST(AccountingTest, the_checker_fills_the_accounting_and_the_expectation_bands_read_it) {
    Scenario s = one_order();
    s.expect.every_trial.bands["duplicated"] = Band{0, 0};
    s.expect.every_trial.bands["lost"] = Band{0, 0};
    s.expect.every_trial.bands["processed_once"] = Band{1, std::nullopt};
    s.expect.every_trial.bands["redelivered"] = Band{0, 0};
    s.expect.every_trial.bands["unexpected"] = Band{0, 0};
    const TrialOutcome t = check_trial(s, 1, 7, claimed_twice(), {{42, "paid", 2}}, {});
    EXPECT_EQ(t.accounting.duplicated, 1);
    EXPECT_EQ(t.unmet, (std::vector<std::string>{"duplicated = 0 (measured 1)", "processed_once >= 1 (measured 0)"}));

    // The same terms in every wrong trial only: a right trial is not held to them.
    Scenario w = one_order();
    w.expect.wrong = Expectation::Count::at_least;
    w.expect.n = 1;
    w.expect.every_wrong_trial.bands["duplicated"] = Band{1, std::nullopt};
    EXPECT_TRUE(check_trial(w, 1, 7, {}, {{42, "paid", 2}}, {}).unmet.empty());
    EXPECT_EQ(check_trial(w, 1, 7, {}, {{42, "created", 1}}, {}).unmet,
              std::vector<std::string>{"wrong trial: duplicated >= 1 (measured 0)"});
    EXPECT_TRUE(check_trial(w, 1, 7, claimed_twice(), {{42, "created", 1}}, {}).unmet.empty());
}

TEST(AccountingTest, a_recheck_accounts_again_from_the_history_when_the_trial_kept_it) {
    Scenario s = one_order();
    s.expect.every_trial.bands["duplicated"] = Band{0, 0};
    TrialOutcome t;
    t.trial = 1;
    t.history = claimed_twice();
    t.final_rows = {{42, "paid", 2}};
    // As read from a report whose accounting says nothing happened.
    recheck_trial(s, t);
    EXPECT_EQ(t.accounting.duplicated, 1);
    EXPECT_EQ(t.unmet, std::vector<std::string>{"duplicated = 0 (measured 1)"});

    // Without its history (a long simulated run keeps few) the recorded accounting stands.
    TrialOutcome bare;
    bare.trial = 2;
    bare.final_rows = {{42, "paid", 2}};
    bare.accounting.duplicated = 3;
    recheck_trial(s, bare);
    EXPECT_EQ(bare.accounting.duplicated, 3);
}

// A trial that ended quiet (its group not drained): an entry received and never acknowledged after
// its last delivery is pending, one never received never delivered; each is named. The same history
// without the supervisor's quiet record is a drained trial's: nothing is left over.
TEST(AccountingTest, a_trial_that_ended_quiet_counts_and_names_what_it_left_pending_or_undelivered) {
    std::vector<HistoryRecord> h = {
        publish(1, "1-0", event(42, "created", 1)), publish(1, "1-1", event(42, "paid", 2)),
        publish(1, "1-2", event(42, "shipped", 3)),
        receive(2, "C1", "1-0", event(42, "created", 1)),  // C1 dies holding it
        receive(2, "C2", "1-1", event(42, "paid", 2)), write(3, "C2", "1-1", event(42, "paid", 2), 1),
        ack(4, "C2", "1-1"),
        receive(5, "C2", "1-1", event(42, "paid", 2), 2),  // delivered again after its ack: pending again
    };
    const Accounting drained = account(h);
    EXPECT_EQ(drained.pending, 0);
    EXPECT_EQ(drained.never_delivered, 0);

    h.push_back(rec(9, "relab", Op::observe, {{"quiet_ms", 10000}, {"text", "nothing moved"}}));
    const Accounting a = account(h);
    EXPECT_EQ(a.pending, 2);
    EXPECT_EQ(a.pending_examples, (std::vector<std::string>{"1-0", "1-1"}));
    EXPECT_EQ(a.never_delivered, 1);
    EXPECT_EQ(a.never_delivered_examples, (std::vector<std::string>{"1-2"}));
    EXPECT_EQ(a.lost, 2);
    EXPECT_FALSE(a.clean());
    EXPECT_EQ(accounting_details(a),
              (std::vector<std::string>{"lost 2: 1-0, 1-2", "redelivered after ack 1: 1-1",
                                        "pending (received, never acknowledged) 2: 1-0, 1-1", "never delivered 1: 1-2"}));
}

// The server's PEL, when the quiet record lists it, says what is pending: an entry whose receive a
// SIGKILLed consumer never wrote to its history is pending, not never delivered; one the history
// shows received but the server no longer holds (its ack record lost) is neither.
TEST(AccountingTest, the_servers_pel_in_the_quiet_record_decides_what_is_pending) {
    std::vector<HistoryRecord> h = {
        publish(1, "1-0", event(42, "created", 1)), publish(1, "1-1", event(42, "paid", 2)),
        publish(1, "1-2", event(42, "shipped", 3)),
        receive(2, "C2", "1-1", event(42, "paid", 2)), write(3, "C2", "1-1", event(42, "paid", 2), 1),
        rec(9, "relab", Op::observe, {{"quiet_ms", 10000}, {"pel", json::array({"1-0"})}, {"text", "nothing moved"}}),
    };
    const Accounting a = account(h);
    EXPECT_EQ(a.pending, 1);
    EXPECT_EQ(a.pending_examples, (std::vector<std::string>{"1-0"}));
    EXPECT_EQ(a.never_delivered, 1);
    EXPECT_EQ(a.never_delivered_examples, (std::vector<std::string>{"1-2"}));
    // Without the PEL the history alone misses the first and counts the second.
    h.back().data.erase("pel");
    const Accounting history_only = account(h);
    EXPECT_EQ(history_only.pending_examples, (std::vector<std::string>{"1-1"}));
    EXPECT_EQ(history_only.never_delivered_examples, (std::vector<std::string>{"1-0", "1-2"}));
}

TEST(AccountingTest, a_poison_entry_dead_lettered_is_counted_apart_from_the_lost_and_a_deadline_counts_what_was_left) {
    std::vector<HistoryRecord> h = {
        publish(1, "1-0", event(42, "created", 1)), publish(1, "1-1", event(42, "paid", 2)),
        receive(2, "C1", "1-0", event(42, "created", 1)),
        rec(3, "C1", Op::job_fail, {{"entry", "1-0"}, {"event", event(42, "created", 1)}, {"deliveries", 1}}),
        receive(4, "C1", "1-0", event(42, "created", 1), 2, "claim"),
        rec(5, "C1", Op::job_fail, {{"entry", "1-0"}, {"event", event(42, "created", 1)}, {"deliveries", 2}}),
        rec(6, "C1", Op::dead_letter,
            {{"entry", "1-0"}, {"event", event(42, "created", 1)}, {"deliveries", 2}, {"dead_stream", "orders:dead"},
             {"dead_entry", "9-0"}}),
        ack(7, "C1", "1-0"),
        receive(8, "C1", "1-1", event(42, "paid", 2)), write(9, "C1", "1-1", event(42, "paid", 2), 1), ack(10, "C1", "1-1"),
    };
    const Accounting a = account(h);
    EXPECT_EQ(a.published, 2);
    EXPECT_EQ(a.dead_lettered, 1);
    EXPECT_EQ(a.dead_lettered_examples, (std::vector<std::string>{"1-0"}));
    EXPECT_EQ(a.lost, 0);
    EXPECT_EQ(a.processed_once, 1);
    EXPECT_FALSE(a.clean());
    EXPECT_EQ(accounting_more_text(a), "1 dead-lettered");

    // Without the dead letter and its ack the entry is lost, and a trial cut by its deadline counts it pending.
    std::vector<HistoryRecord> blocked(h.begin(), h.begin() + 6);
    blocked.push_back(rec(20, "relab", Op::observe, {{"stream_deadline_ms", 3000}, {"text", "deadline"}}));
    const Accounting b = account(blocked);
    EXPECT_EQ(b.dead_lettered, 0);
    EXPECT_EQ(b.lost, 2);
    EXPECT_EQ(b.pending, 1);
    EXPECT_EQ(b.never_delivered, 1);
}

HistoryRecord trim(int64_t t, const std::vector<std::string>& ids) {
    return rec(t, "nemesis", Op::fault,
               {{"action", "trim"}, {"phase", "ok"}, {"trimmed", ids.size()}, {"trimmed_entries", ids}});
}

TEST(AccountingTest, a_trim_sorts_the_entries_it_removed_by_what_the_group_had_done_with_them) {
    const std::vector<HistoryRecord> h = {
        publish(1, "1-0", event(42, "created", 1)), publish(1, "1-1", event(42, "paid", 2)),
        publish(1, "1-2", event(42, "shipped", 3)), publish(1, "1-3", event(42, "refunded", 4)),
        receive(2, "C1", "1-0", event(42, "created", 1)), write(3, "C1", "1-0", event(42, "created", 1), 1),
        ack(4, "C1", "1-0"),                               // acknowledged before the trim: nothing to count
        receive(5, "C1", "1-1", event(42, "paid", 2)),    // pending when trimmed
        trim(6, {"1-0", "1-1", "1-2"}),                     // 1-2 never delivered
        rec(7, "C1", Op::receive, {{"entry", "1-1"}, {"deliveries", 2}, {"via", "pending"}, {"deleted", true}}),
        ack(8, "C1", "1-1"),
        receive(9, "C1", "1-3", event(42, "refunded", 4)), write(10, "C1", "1-3", event(42, "refunded", 4), 1),
        ack(11, "C1", "1-3"),
    };
    const Accounting a = account(h);
    EXPECT_EQ(a.trimmed_undelivered, 1);
    EXPECT_EQ(a.trimmed_undelivered_examples, (std::vector<std::string>{"1-2"}));
    EXPECT_EQ(a.trimmed_pending, 1);
    EXPECT_EQ(a.trimmed_pending_examples, (std::vector<std::string>{"1-1"}));
    EXPECT_EQ(a.lost, 2);
    EXPECT_EQ(a.processed_once, 2);
    EXPECT_FALSE(a.clean());
    EXPECT_EQ(accounting_more_text(a), "1 trimmed before delivery · 1 trimmed while pending");

    // A trim that failed, or trimmed nothing, counts nothing.
    std::vector<HistoryRecord> failed = h;
    failed[8].data["phase"] = "fail";
    const Accounting f = account(failed);
    EXPECT_EQ(f.trimmed_undelivered + f.trimmed_pending, 0);
}

HistoryRecord refused(int64_t t, const std::string& actor, const std::string& entry, json ev, int attempt, bool retry) {
    return rec(t, actor, Op::serialization_failure,
               {{"entry", entry}, {"event", ev}, {"attempt", attempt}, {"isolation", "repeatable_read"},
                {"snapshot_version", 0}, {"error", "could not serialize access due to concurrent update"}, {"retry", retry}});
}

// write.isolation: a refused try is no write. Retried, the entry is processed once by the try that
// committed; given up on, it is acknowledged with no write, so it is lost. Each refusal is counted.
TEST(AccountingTest, a_refused_transaction_is_counted_and_only_its_committed_retry_is_a_write) {
    const Accounting retried = account({publish(1, "1-0", event(42, "created", 1)),
                                        receive(2, "C1", "1-0", event(42, "created", 1)),
                                        refused(3, "C1", "1-0", event(42, "created", 1), 1, true),
                                        write(4, "C1", "1-0", event(42, "created", 1), 0), ack(5, "C1", "1-0")});
    EXPECT_EQ(retried.serialization_failures, 1);
    EXPECT_EQ(retried.serialization_failure_examples, (std::vector<std::string>{"1-0"}));
    EXPECT_EQ(retried.processed_once, 1);
    EXPECT_EQ(retried.lost, 0);
    EXPECT_TRUE(retried.clean());
    EXPECT_EQ(accounting_more_text(retried), "1 serialization failure · 1 unapplied");

    const Accounting gave_up = account({publish(1, "1-0", event(42, "created", 1)),
                                        receive(2, "C1", "1-0", event(42, "created", 1)),
                                        refused(3, "C1", "1-0", event(42, "created", 1), 1, false), ack(4, "C1", "1-0")});
    EXPECT_EQ(gave_up.serialization_failures, 1);
    EXPECT_EQ(gave_up.lost, 1);
    EXPECT_EQ(gave_up.lost_examples, (std::vector<std::string>{"1-0"}));
    EXPECT_FALSE(gave_up.clean());
}

// A load trial too large to keep its history still has a throughput: its load figures' entries
// written over their span; with its history, the writes themselves count.
TEST(AccountingTest, a_trial_without_its_history_takes_its_throughput_from_its_load_figures) {
    TrialOutcome t;
    t.load.events = 3000;
    t.load.span_us = 2'000'000;
    EXPECT_EQ(trial_jobs_and_last_write_ns(t), std::make_optional(std::make_pair(int64_t{3000}, int64_t{2'000'000'000})));
    const ThroughputStats tp = throughput({t});
    EXPECT_EQ(tp.trials, 1);
    EXPECT_DOUBLE_EQ(tp.per_s, 1500.0);
    t.history = {write(1'000'000'000, "C1", "1-0", event(42, "created", 1), 1)};
    EXPECT_EQ(trial_jobs_and_last_write_ns(t), std::make_optional(std::make_pair(int64_t{1}, int64_t{1'000'000'000})));
    EXPECT_FALSE(trial_jobs_and_last_write_ns(TrialOutcome{}).has_value());
}

}  // namespace accounting_test
}  // namespace relab
