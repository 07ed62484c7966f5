// The simulator against the real servers: for every deterministic lab, `relab run --backend sim`
// and `relab run --backend real` must reach the same outcome (wrong count, every trial's final
// rows, the stream's order of events; for the idempotency middleware labs the orders table, the
// counts and every client's answers). Racy labs (S4a, S4b) are left out: their outcome is a
// distribution, compared by rate elsewhere.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "relab_cli.h"

namespace cross_check_test {

namespace fs = std::filesystem;
using nlohmann::json;

using relab::test::slurp;

class CrossCheckTest : public relab::test::RelabDirTest {
protected:
    // The JSON report of `relab run ARGS --backend BACKEND`; fails the test on a non-zero exit.
    json run(const std::string& backend, const std::string& args) {
        const auto json_path = m_dir / (backend + ".json");
        const auto err_path = m_dir / (backend + ".err");
        const std::string cmd = fmt::format("TMPDIR={} {} run {} --backend {} --json {} --quiet 2>{}", (m_dir / "tmp").string(),
                                            RELAB_BINARY, args, backend, json_path.string(), err_path.string());
        const int status = std::system(cmd.c_str());
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd << "\n" << slurp(err_path);
        if (!fs::exists(json_path)) return json::object();
        return json::parse(slurp(json_path));
    }

    // The same labs and options on the real servers, then on the simulator.
    std::pair<json, json> run_both(const std::vector<std::string>& ids, const std::string& options) {
        std::string args;
        for (const auto& id : ids) args += id + " ";
        args += options;
        json real = run("real", args);
        return {std::move(real), run("sim", args)};
    }
};

// What must agree between the backends, per lab: the wrong count and, per trial, the final
// statuses and amounts and the stream's events (order:type) in log order. (Not the version column: with
// "version_source": "entry_id" it is a timestamp, wall clock on one side, virtual on the other.) Trials are sorted: their order is not the
// outcome.
struct LabOutcome {
    int trials = 0;
    int wrong = 0;
    bool held = false;
    std::vector<std::string> trial_outcomes;
};

std::map<std::string, LabOutcome> outcomes(const json& report) {
    std::map<std::string, LabOutcome> out;
    if (!report.contains("labs")) return out;
    for (const auto& lab : report.at("labs")) {
        LabOutcome o;
        o.trials = lab.at("summary").at("trials");
        o.wrong = lab.at("summary").at("wrong");
        o.held = lab.at("summary").at("held");
        for (const auto& t : lab.at("trials")) {
            std::string text = "rows:";
            for (const auto& row : t.at("final_rows"))
                text += fmt::format(" #{}={} amount {}", row.at("id").get<int64_t>(), row.at("status").get<std::string>(),
                                    row.value("amount", int64_t{0}));
            text += " stream:";
            for (const auto& e : t.at("stream"))
                text += " " + e.at("fields").value("order", "?") + ":" + e.at("fields").value("type", "?");
            o.trial_outcomes.push_back(text);
        }
        std::sort(o.trial_outcomes.begin(), o.trial_outcomes.end());
        out[lab.at("id")] = o;
    }
    return out;
}

void expect_same_outcomes(const json& real, const json& sim, const std::vector<std::string>& ids) {
    const auto r = outcomes(real);
    const auto s = outcomes(sim);
    for (const auto& id : ids) {
        SCOPED_TRACE(id);
        ASSERT_TRUE(r.count(id)) << "no " << id << " in the real report";
        ASSERT_TRUE(s.count(id)) << "no " << id << " in the sim report";
        const LabOutcome& a = r.at(id);
        const LabOutcome& b = s.at(id);
        EXPECT_GT(a.trials, 0);
        EXPECT_EQ(a.trials, b.trials);
        EXPECT_EQ(a.wrong, b.wrong);
        EXPECT_EQ(a.held, b.held);
        EXPECT_TRUE(a.held);
        EXPECT_EQ(a.trial_outcomes, b.trial_outcomes);
    }
    for (const auto& lab : sim.at("labs")) EXPECT_EQ(lab.at("backend"), "sim");
    for (const auto& lab : real.at("labs")) EXPECT_EQ(lab.at("backend"), "real");
}

// What must agree for an idempotency middleware lab, per trial: the counts taken from the orders
// table and the answers, the orders (id, user, idem_key, payload: ids restart at 1 in every trial
// on both backends), each client's answers in order (code, source, body — the body names the
// order), and what an observation saw (which keys exist; the TTLs' seconds are left out, since
// a few ms decide whether 86,399.5 s rounds up). In `racy_winner` labs two clients send at the
// same instant and which one wins the claim is the schedule's choice on both backends: there the
// answer sequences are compared without the client's name.
struct IdemLabOutcome {
    int trials = 0;
    int wrong = 0;
    bool held = false;
    std::vector<std::string> trial_outcomes;
};

std::map<std::string, IdemLabOutcome> idem_outcomes(const json& report, const std::vector<std::string>& racy_winner) {
    std::map<std::string, IdemLabOutcome> out;
    if (!report.contains("labs")) return out;
    const std::regex seconds("TTL -?[0-9]+ s");
    for (const auto& lab : report.at("labs")) {
        const std::string id = lab.at("id");
        const bool anonymous = std::find(racy_winner.begin(), racy_winner.end(), id) != racy_winner.end();
        IdemLabOutcome o;
        o.trials = lab.at("summary").at("trials");
        o.wrong = lab.at("summary").at("wrong");
        o.held = lab.at("summary").at("held");
        for (const auto& t : lab.at("trials")) {
            std::string text = "counts: " + t.at("idem").at("counts").dump() + "\norders:";
            for (const auto& order : t.at("idem").at("orders"))
                text += fmt::format(" #{} user {} key {} payload {};", order.at("id").get<int64_t>(),
                                    order.at("user_id").get<int64_t>(), order.at("idem_key").get<std::string>(),
                                    order.at("payload").get<std::string>());
            std::map<std::string, std::string> per_actor;
            std::vector<std::string> observed;
            for (const auto& r : t.at("history")) {
                if (r.at("op") == "answer")
                    per_actor[r.at("actor")] += fmt::format(" [{} {} {}]", r.at("code").get<int>(),
                                                            r.at("source").get<std::string>(),
                                                            r.at("body").get<std::string>());
                if (r.at("op") == "fault" && r.value("action", "") == "observe" && r.value("phase", "") == "ok")
                    observed.push_back(std::regex_replace(r.at("text").get<std::string>(), seconds, "TTL … s"));
            }
            std::vector<std::string> sequences;
            for (const auto& [actor, answers] : per_actor) sequences.push_back((anonymous ? "?" : actor) + ":" + answers);
            std::sort(sequences.begin(), sequences.end());
            for (const auto& seq : sequences) text += "\nanswers " + seq;
            for (const auto& seen : observed) text += "\nobserved " + seen;
            o.trial_outcomes.push_back(text);
        }
        std::sort(o.trial_outcomes.begin(), o.trial_outcomes.end());
        out[id] = o;
    }
    return out;
}

TEST_F(CrossCheckTest, consumer_side_deterministic_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"08a-baseline", "08b-s1", "08c-s4c", "08d-s5"};
    const auto [real, sim] = run_both(ids, "--runs 2 --seed 7");
    expect_same_outcomes(real, sim, ids);
}

// Issue 12's labs: the same outcome, and the same mechanism: per trial, each write's event with what
// it did to the row (inserted, updated, none; the INSERT's unique violation), and the side effects'
// events in the table's seq order.
TEST_F(CrossCheckTest, beyond_labs_end_the_same_on_both_backends_by_the_same_writes_and_side_effects) {
    const std::vector<std::string> ids = {"upsert-first-event", "upsert-naive", "s5-side-effects", "s5-side-effects-s1"};
    const auto [real, sim] = run_both(ids, "--runs 2 --seed 7");
    expect_same_outcomes(real, sim, ids);
    auto mechanism = [](const json& report) {
        std::map<std::string, std::vector<std::string>> out;
        for (const auto& lab : report.at("labs")) {
            std::vector<std::string> trials;
            for (const auto& t : lab.at("trials")) {
                std::vector<std::string> writes;
                std::vector<std::pair<int64_t, std::string>> sent;
                for (const auto& r : t.at("history")) {
                    if (r.at("op") == "write")
                        writes.push_back(fmt::format("{}:{}:{}:{}", r.at("event").at("type").get<std::string>(),
                                                     r.value("row_action", std::string("-")),
                                                     r.value("insert_conflict", false), r.at("affected").get<int64_t>()));
                    if (r.at("op") == "side_effect")
                        sent.emplace_back(r.at("seq").get<int64_t>(), r.at("event").at("type").get<std::string>());
                }
                std::sort(writes.begin(), writes.end());
                std::sort(sent.begin(), sent.end());
                std::string text = fmt::format("writes: {}; sent:", fmt::join(writes, " "));
                for (const auto& [seq, type] : sent) text += fmt::format(" {}={}", seq, type);
                trials.push_back(text);
            }
            std::sort(trials.begin(), trials.end());
            out[lab.at("id")] = trials;
        }
        return out;
    };
    const auto a = mechanism(real);
    const auto b = mechanism(sim);
    for (const auto& id : ids) {
        SCOPED_TRACE(id);
        ASSERT_TRUE(a.count(id) && b.count(id));
        EXPECT_EQ(a.at(id), b.at(id));
    }
}

TEST_F(CrossCheckTest, producer_side_deterministic_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"08e-reorder", "08f-p2-business", "08f-p2-entry-id", "08g-outbox-naive",
                                          "08g-outbox-per-key"};
    const auto [real, sim] = run_both(ids, "--runs 1 --seed 7");
    expect_same_outcomes(real, sim, ids);
}

// The strategies the articles left unverified (group "beyond") whose outcome does not depend on
// timing: the reorder buffer's three labs, P4's four (change events and carried states, reordered
// and redelivered: the final amount is compared too), S4a's lock behind S3's per-key FIFO, and a
// kill mid-read with batch acknowledgement, and with batch commit.
TEST_F(CrossCheckTest, beyond_deterministic_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"p3-buffer", "p3-gap-timeout", "p3-gap-timeout-drop", "p4-change-reorder",
                                          "p4-state-reorder", "p4-change-redelivery", "p4-state-redelivery", "lock-fifo",
                                          "ack-batch-crash", "commit-batch-crash"};
    const auto [real, sim] = run_both(ids, "--runs 1 --seed 7");
    expect_same_outcomes(real, sim, ids);
}

// S2 on a real Redis Cluster and on the simulator's one keyspace: sharding by key, S1 on the same
// workload, and the reshard after draining end with the same rows and the same events in each
// shard's stream, in the same order (the streams one after the other). s2-reshard is left out:
// how many orders its stale overwrites leave wrong depends on timing.
TEST_F(CrossCheckTest, s2_deterministic_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"s2-shard", "s2-s1-same-workload", "s2-reshard-drain"};
    const auto [real, sim] = run_both(ids, "--runs 1 --seed 7");
    expect_same_outcomes(real, sim, ids);
}

// The beyond labs (several dispatchers, a dispatcher killed before its mark): the same outcome,
// and per trial the same per-event counts: events published again, written again, skipped.
TEST_F(CrossCheckTest, beyond_outbox_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"outbox-multi-naive", "outbox-multi-per-key",
                                          "outbox-dispatcher-crash"};
    const auto [real, sim] = run_both(ids, "--runs 1 --seed 7");
    expect_same_outcomes(real, sim, ids);
    auto per_event = [](const json& report, const std::string& id) {
        for (const auto& lab : report.at("labs"))
            if (lab.at("id") == id) {
                const json& a = lab.at("trials").at(0).at("accounting");
                return fmt::format("republished {} reapplied {} skipped {}", a.at("republished").get<int>(),
                                   a.at("reapplied").get<int>(), a.at("skipped").get<int>());
            }
        return std::string("(lab missing)");
    };
    for (const auto& id : ids) EXPECT_EQ(per_event(real, id), per_event(sim, id)) << id;
    EXPECT_EQ(per_event(sim, "outbox-dispatcher-crash"), "republished 1 reapplied 0 skipped 1");
}

// The fault labs: the same outcome, and the same story of faults and deliveries: which fault
// fired (action, phase), and each receipt's event, how it came (new, pending, claim)
// and its delivery count.
TEST_F(CrossCheckTest, fault_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"08h-claim-plain", "08h-claim-cas",      "08h-restart-pel",     "08h-pause-claim",
                                          "08h-pause-claim-cas", "08i-restart-volatile", "08i-restart-aof",
                                          "08i-failover",        "08j-outbox-pg-restart", "08k-drop-clients",
                                          "beyond-link-hang",    "beyond-link-hang-cas", "beyond-link-reset",
                                          "beyond-link-reset-cas-state"};
    const auto [real, sim] = run_both(ids, "--runs 1 --seed 7");
    expect_same_outcomes(real, sim, ids);
    auto story = [](const json& report, const std::string& id) {
        std::vector<std::string> out;
        for (const auto& lab : report.at("labs")) {
            if (lab.at("id") != id) continue;
            for (const auto& r : lab.at("trials").at(0).at("history")) {
                if (r.at("op") == "fault") out.push_back(fmt::format("fault {} {}", r.at("action").get<std::string>(),
                                                                     r.at("phase").get<std::string>()));
                if (r.at("op") == "receive")
                    out.push_back(fmt::format("receive {} {} {}", r.at("event").at("type").get<std::string>(),
                                              r.at("via").get<std::string>(), r.at("deliveries").get<int>()));
            }
        }
        std::sort(out.begin(), out.end());  // two receipts at the same moment may come in either order
        return out;
    };
    for (const auto& id : ids) {
        SCOPED_TRACE(id);
        EXPECT_EQ(story(real, id), story(sim, id));
    }
}

// The failures after the articles the simulator runs (a poison entry with and without a cap, a
// redeploy under a new name): the same outcome and the same accounting of what was left or given up.
TEST_F(CrossCheckTest, after_articles_labs_end_the_same_on_both_backends) {
    const std::vector<std::string> ids = {"poison-no-cap", "poison-dead-letter", "churn-rename"};
    const auto [real, sim] = run_both(ids, "--runs 1 --seed 7");
    expect_same_outcomes(real, sim, ids);
    auto left = [](const json& report, const std::string& id) {
        for (const auto& lab : report.at("labs"))
            if (lab.at("id") == id) {
                const json& a = lab.at("trials").at(0).at("accounting");
                return fmt::format("lost {} pending {} dead_lettered {}", a.at("lost").get<int>(),
                                   a.at("pending").get<int>(), a.at("dead_lettered").get<int>());
            }
        return std::string("(lab missing)");
    };
    for (const auto& id : ids) EXPECT_EQ(left(real, id), left(sim, id)) << id;
    EXPECT_EQ(left(sim, "poison-dead-letter"), "lost 0 pending 0 dead_lettered 1");
}

TEST_F(CrossCheckTest, idempotency_middleware_labs_end_the_same_on_both_backends) {
    // Every idempotency workload lab without a server fault; the others need a restart, a
    // failover, an eviction or a killed client, which the simulator does not model. (The one-tier
    // TTL claim's observations only read the TTL left.)
    const std::vector<std::string> ids = {"idem-mw-double-click", "idem-mw-mismatch",      "idem-mw-release",
                                          "idem-key-correct",     "idem-key-hash-in-key",  "idem-key-no-user",
                                          "idem-key-owner-check", "idem-key-version-bump", "claim-one-tier-replay",
                                          "idem-ttl-midrequest",  "idem-ttl-202",          "idem-add-get-window"};
    const auto [real, sim] = run_both(ids, "--runs 2 --seed 7");
    const std::vector<std::string> racy_winner = {"idem-mw-double-click"};
    const auto r = idem_outcomes(real, racy_winner);
    const auto s = idem_outcomes(sim, racy_winner);
    for (const auto& id : ids) {
        SCOPED_TRACE(id);
        ASSERT_TRUE(r.count(id)) << "no " << id << " in the real report";
        ASSERT_TRUE(s.count(id)) << "no " << id << " in the sim report";
        const IdemLabOutcome& a = r.at(id);
        const IdemLabOutcome& b = s.at(id);
        EXPECT_EQ(a.trials, 2);
        EXPECT_EQ(a.trials, b.trials);
        EXPECT_EQ(a.wrong, b.wrong);
        EXPECT_TRUE(a.held);
        EXPECT_EQ(a.held, b.held);
        EXPECT_EQ(a.trial_outcomes, b.trial_outcomes);
    }
    for (const auto& lab : sim.at("labs")) {
        EXPECT_EQ(lab.at("backend"), "sim");
        EXPECT_FALSE(lab.at("skipped").get<bool>()) << lab.at("id") << ": " << lab.at("skip_reason");
    }
    // The double click: one order, the loser answered 409 while in progress and then the replay.
    const auto& click = s.at("idem-mw-double-click").trial_outcomes;
    ASSERT_FALSE(click.empty());
    EXPECT_NE(click[0].find("\"orders\":1"), std::string::npos) << click[0];
    EXPECT_NE(click[0].find("[409 in_progress"), std::string::npos) << click[0];
    EXPECT_NE(click[0].find("[201 replay"), std::string::npos) << click[0];
}

// Per lab, per trial (sorted): each order's applied writes in time order ("#42 created paid
// shipped") and the receipts that came by XAUTOCLAIM ("#42 created d2").
std::map<std::string, std::vector<std::string>> s3_mechanism(const json& report) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& lab : report.at("labs")) {
        std::vector<std::string> trials;
        for (const auto& t : lab.at("trials")) {
            std::map<int64_t, std::vector<std::string>> writes;
            std::vector<std::string> claimed;
            for (const auto& r : t.at("history")) {
                if (r.at("op") == "write" && r.at("affected").get<int64_t>() > 0)
                    writes[r.at("event").at("order").get<int64_t>()].push_back(r.at("event").at("type"));
                if (r.at("op") == "receive" && r.value("via", std::string()) == "claim")
                    claimed.push_back(fmt::format("#{} {} d{}", r.at("event").at("order").get<int64_t>(),
                                                  r.at("event").at("type").get<std::string>(),
                                                  r.at("deliveries").get<int64_t>()));
            }
            std::sort(claimed.begin(), claimed.end());
            std::string text;
            for (const auto& [order, types] : writes) text += fmt::format("#{} {}; ", order, fmt::join(types, " "));
            text += fmt::format("claimed: {}", fmt::join(claimed, ", "));
            trials.push_back(text);
        }
        std::sort(trials.begin(), trials.end());
        out[lab.at("id")] = trials;
    }
    return out;
}

double jobs_per_s(const json& report, const std::string& id) {
    for (const auto& lab : report.at("labs"))
        if (lab.at("id") == id) return lab.at("summary").at("throughput").at("jobs_per_s").get<double>();
    ADD_FAILURE() << "no lab " << id;
    return 0;
}

// S3, worker per key (issue 12): the fanout lab, S1 on its workload and the reader's crash end the
// same on both backends, by the same mechanism: each order's writes in the same order (created,
// paid, shipped under S3; shipped, then the claimed created and paid after a crash) and the same
// entries given back by XAUTOCLAIM with delivery count 2. On each backend S3 wrote the same
// workload's jobs faster than S1, as that backend measured them.
TEST_F(CrossCheckTest, s3_labs_end_the_same_on_both_backends_and_s3_outpaces_s1_on_each) {
    const std::vector<std::string> ids = {"s3-fanout", "s3-fanout-s1", "s3-reader-crash"};
    // The part s3-fanout is both S3 and its S1 companion.
    const json real = run("real", "s3-fanout s3-reader-crash --runs 2 --seed 7");
    const json sim = run("sim", "s3-fanout s3-reader-crash --runs 2 --seed 7");
    expect_same_outcomes(real, sim, ids);
    const auto a = s3_mechanism(real);
    const auto b = s3_mechanism(sim);
    for (const auto& id : ids) {
        SCOPED_TRACE(id);
        ASSERT_TRUE(a.count(id) && b.count(id));
        EXPECT_EQ(a.at(id), b.at(id));
    }
    EXPECT_EQ(a.at("s3-fanout").front(), "#42 created paid shipped; #43 created paid shipped; #44 created paid shipped; "
                                         "#45 created paid shipped; claimed: ");
    EXPECT_EQ(a.at("s3-reader-crash").front(),
              "#42 shipped created paid; #43 shipped created paid; claimed: #42 created d2, #42 paid d2, #43 created "
              "d2, #43 paid d2");
    for (const json* report : {&real, &sim}) EXPECT_GT(jobs_per_s(*report, "s3-fanout"), jobs_per_s(*report, "s3-fanout-s1"));
}

}  // namespace cross_check_test
