// Each fault action is a composition of the Control port's primitives, written once in
// fault/faults.cpp for both backends. A recording Control checks what each action asks of the world,
// in order, and what it reports; the last test walks every action and target of the table, so a new
// row is tried without a line here.
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fault/faults.h"

namespace relab {
namespace fault_compositions_test {

using nlohmann::json;

// A world of one primary (with a replica) and roles, answering every primitive and writing down
// each call ("kill redis", "commands redis db=-1 SET×200", ...).
class RecordingControl : public Control {
public:
    std::vector<std::string> calls;
    std::set<std::string> down;    // targets whose process has ended
    std::set<std::string> frozen;  // targets paused
    int64_t keys = 3;
    bool appendonly = false;
    std::string last_delivered;  // a stream lab's group position ("" in other labs)
    int64_t links = 2;
    int64_t oom_from = -1;  // the SET of key index >= this is refused with OOM (-1: none)
    std::string last_key;   // the last key a SET wrote
    std::string refusal = "OOM command not allowed when used memory > 'maxmemory'.";
    std::map<std::string, int64_t> info = {{"evicted_keys", 5}, {"rdb_saves", 7}, {"rdb_bgsave_in_progress", 0},
                                           {"maxmemory", 3'000'000}};
    int bgsave_polls = 2;  // INFO persistence polls before a BGSAVE is done
    Nanos clock{1'000'000'000};

    Nanos now() override { return clock; }
    void wait(Phase phase, std::optional<Nanos> until) override {
        EXPECT_EQ(phase, Phase::fault);
        ASSERT_TRUE(until.has_value());
        clock = std::max(clock, *until);
    }
    bool finished(const Target& t) override { return down.count(target_name(t)) > 0; }
    void check_roles() override {}
    void kill(const Target& t) override {
        log("kill " + target_name(t));
        down.insert(target_name(t));
        frozen.erase(target_name(t));
    }
    void pause(const Target& t) override {
        log("pause " + target_name(t));
        frozen.insert(target_name(t));
    }
    void resume(const Target& t) override {
        log("resume " + target_name(t));
        frozen.erase(target_name(t));
    }
    bool paused(const Target& t) override { return frozen.count(target_name(t)) > 0; }
    void start(const Target& t) override {
        log("start " + target_name(t));
        down.erase(target_name(t));
        clock += Millis{20};
    }
    int64_t drop_links(const Target& t) override {
        log("drop_links " + target_name(t));
        return links;
    }
    // Each role's links as the faults left them, and the bytes a blackhole held (released on heal).
    std::map<std::string, LinkMode> link_modes;
    int64_t held = 0;
    json set_link(const Target& t, LinkServer server, const LinkMode& mode) override {
        log(fmt::format("set_link {} {} blackhole={} delay={}", target_name(t), to_string(server), mode.blackhole,
                        mode.delay.count()));
        link_modes[target_name(t) + "/" + to_string(server)] = mode;
        const int64_t released = mode.blackhole ? 0 : std::exchange(held, 0);
        return {{"released", released}, {"unit", "bytes"}};
    }
    json promote(Nanos killed_at) override {
        log("promote");
        clock = killed_at + Millis{1600};
        down.erase("redis");
        return {{"switch_ms", 1600}, {"text", "the replica promoted"}};
    }
    json shard_promote(const Target& master, Nanos killed_at) override {
        log(fmt::format("shard_promote {}", master.shard));
        clock = killed_at + Millis{2100};
        down.erase(target_name(master));
        return {{"switch_ms", 2100}, {"old_master", "127.0.0.1:7001"}, {"text", "the cluster promoted the replica"}};
    }
    std::vector<json> commands(const Target& server, int64_t db, const std::vector<Command>& batch) override {
        log(fmt::format("commands {} db={} {}×{}", target_name(server), db, batch.at(0).at(0), batch.size()));
        std::vector<json> out;
        for (const auto& argv : batch) out.push_back(reply(argv));
        return out;
    }
    ServerState describe(const Target& server) override {
        log("describe " + target_name(server));
        return {keys, appendonly, last_delivered};
    }
    std::string server_key(const std::string& logical) override { return "t1:" + logical; }

    // Not the fault vocabulary's: the supervisor's side of the port.
    bool clients_ready() override { return true; }
    void go(Nanos) override {}
    std::vector<std::string> present(const std::vector<std::string>& k) override { return k; }
    int64_t pttl_ms(const std::string&) override { return -1; }
    void raise_flag(const std::string&) override {}
    bool drained() override { return true; }
    json group_state() override { return json::object(); }
    std::optional<std::vector<std::string>> pel_ids() override { return std::nullopt; }
    void raise_stop() override {}
    void unblock_readers() override {}
    void poll_records(std::vector<HistoryRecord>&) override {}
    int64_t activity() override { return 0; }
    void record(HistoryRecord) override {}

private:
    void log(std::string call) {
        // A fault's consecutive INFO polls are one line: their count is the snapshot's business.
        if (!calls.empty() && calls.back() == call && call.find("INFO") != std::string::npos) return;
        calls.push_back(std::move(call));
    }
    json queued = json::array();
    json queue(json r) {
        queued.push_back(std::move(r));
        return "QUEUED";
    }
    json reply(const Command& argv) {
        const std::string& name = argv.at(0);
        if (name == "INFO") {
            if (argv.at(1) == "persistence" && bgsave_polls > 0 && --bgsave_polls == 0) {
                info["rdb_bgsave_in_progress"] = 0;
                ++info["rdb_saves"];
            }
            std::string text = "# " + argv.at(1) + "\r\n";
            for (const auto& [k, v] : info) text += fmt::format("{}:{}\r\n", k, v);
            return text + "maxmemory_policy:noeviction\r\n";
        }
        if (name == "BGSAVE") {
            info["rdb_bgsave_in_progress"] = 1;
            return "Background saving started";
        }
        if (name == "DBSIZE") return keys;
        if (name == "SET") {
            last_key = argv.at(1);
            const int64_t index = std::stoll(argv.at(1).substr(argv.at(1).rfind(':') + 1));
            if (oom_from >= 0 && index >= oom_from) return {{"error", refusal}};
            return "OK";
        }
        // The stream commands delete_consumer and trim send in one MULTI … EXEC: each is queued,
        // and EXEC answers them in order, as a server with one pending and two stream entries would.
        if (name == "MULTI") return "OK";
        if (name == "XPENDING") return queue(json::array({json::array({"1-0", argv.at(6), 10, 1})}));
        if (name == "XGROUP") return queue(1);
        if (name == "XRANGE") return queue(json::array({json::array({"1-0", json::array({"a", "1"})}),
                                                         json::array({"1-1", json::array({"a", "2"})})}));
        if (name == "XTRIM") return queue(2 - std::stoll(argv.at(3)));
        if (name == "EXEC") {
            json out = std::move(queued);
            queued = json::array();
            return out;
        }
        return {{"error", "ERR unknown command"}};
    }
};

FaultSpec spec(FaultAction a) {
    FaultSpec f;
    f.action = a;
    return f;
}

const Target kRedis = Target::of(FaultTarget::redis);

TEST(FaultCompositionsTest, failover_kills_the_primary_resumes_the_paused_replica_and_waits_for_sentinels_promotion) {
    RecordingControl c;
    c.last_delivered = "5-0";
    c.frozen.insert("redis-replica");
    const json d = apply_fault(spec(FaultAction::failover), kRedis, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"describe redis", "kill redis", "resume redis-replica", "promote",
                                                 "describe redis"}));
    EXPECT_EQ(d.at("switch_ms"), 1600);
    EXPECT_EQ(d.at("done_ms"), 1600);  // from the kill, the promotion included
    EXPECT_EQ(d.at("text"), "primary killed (SIGKILL), the paused replica resumed; the replica promoted; the group's "
                            "last-delivered-id 5-0 before, 5-0 after");
}

TEST(FaultCompositionsTest, failover_of_a_running_replica_resumes_nothing_and_an_idempotency_lab_reads_no_group) {
    RecordingControl c;
    const json d = apply_fault(spec(FaultAction::failover), kRedis, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"describe redis", "kill redis", "promote"}));
    EXPECT_EQ(d.at("text"), "primary killed (SIGKILL); the replica promoted");
}

TEST(FaultCompositionsTest, shard_failover_kills_the_shards_master_and_waits_for_the_clusters_own_promotion) {
    RecordingControl c;
    const json d = apply_fault(spec(FaultAction::shard_failover), Target{FaultTarget::redis_cluster_master, "", 2}, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"kill redis-cluster-master", "shard_promote 2"}));
    EXPECT_EQ(d.at("shard"), 2);
    EXPECT_EQ(d.at("switch_ms"), 2100);
    EXPECT_EQ(d.at("done_ms"), 2100);
    EXPECT_EQ(d.at("text"), "shard 2's master 127.0.0.1:7001 killed (SIGKILL); the cluster promoted the replica");
}

// A replica a pause held back is resumed after the kill, stale, so that it can win the election.
TEST(FaultCompositionsTest, shard_failover_resumes_the_shards_paused_replica_after_the_kill) {
    RecordingControl c;
    const Target replica{FaultTarget::redis_cluster_replica, "", 0};
    json d = apply_fault(spec(FaultAction::pause), replica, c);
    EXPECT_EQ(d.at("text"), "shard 0's replica paused (SIGSTOP)");
    c.calls.clear();
    d = apply_fault(spec(FaultAction::shard_failover), Target{FaultTarget::redis_cluster_master, "", 0}, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"kill redis-cluster-master", "resume redis-cluster-replica",
                                                 "shard_promote 0"}));
    EXPECT_EQ(d.at("text"), "shard 0's master 127.0.0.1:7001 killed (SIGKILL), its paused replica resumed; the cluster "
                            "promoted the replica");
}

TEST(FaultCompositionsTest, restart_of_redis_kills_it_starts_it_and_counts_what_it_kept) {
    RecordingControl c;
    c.appendonly = true;
    const json d = apply_fault(spec(FaultAction::restart), kRedis, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"describe redis", "kill redis", "start redis", "describe redis"}));
    EXPECT_EQ(d.at("keys_before"), 3);
    EXPECT_EQ(d.at("keys_after"), 3);
    EXPECT_EQ(d.at("persistence"), "appendonly yes");
    EXPECT_EQ(d.at("restart_ms"), 20);
}

TEST(FaultCompositionsTest, restart_of_a_role_kills_it_only_while_it_runs) {
    RecordingControl c;
    json d = apply_fault(spec(FaultAction::restart), Target::role("C1"), c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"kill C1", "start C1"}));
    EXPECT_TRUE(d.at("killed").get<bool>());
    c.calls.clear();
    c.down.insert("C2");
    d = apply_fault(spec(FaultAction::restart), Target::role("C2"), c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"start C2"}));
    EXPECT_FALSE(d.at("killed").get<bool>());
    EXPECT_EQ(d.at("text"), "C2 started under the same name");
}

TEST(FaultCompositionsTest, restart_of_the_replica_brings_the_old_primary_back_and_of_postgres_recovers_it) {
    RecordingControl c;
    apply_fault(spec(FaultAction::restart), Target::of(FaultTarget::redis_replica), c);
    apply_fault(spec(FaultAction::restart), Target::of(FaultTarget::postgres), c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"start redis-replica", "kill postgres", "start postgres"}));
}

TEST(FaultCompositionsTest, kill_pause_and_resume_refuse_a_target_not_in_the_state_they_change) {
    RecordingControl c;
    c.down.insert("C1");
    EXPECT_THROW(apply_fault(spec(FaultAction::kill), Target::role("C1"), c), std::runtime_error);
    EXPECT_THROW(apply_fault(spec(FaultAction::pause), Target::role("C1"), c), std::runtime_error);
    EXPECT_THROW(apply_fault(spec(FaultAction::resume), Target::role("C2"), c), std::runtime_error);
    EXPECT_TRUE(c.calls.empty());
    EXPECT_EQ(apply_fault(spec(FaultAction::pause), Target::role("C2"), c).at("text"), "C2 paused (SIGSTOP)");
    EXPECT_EQ(apply_fault(spec(FaultAction::resume), Target::role("C2"), c).at("text"), "C2 resumed (SIGCONT)");
    EXPECT_EQ(c.calls, (std::vector<std::string>{"pause C2", "resume C2"}));
}

TEST(FaultCompositionsTest, drop_link_drops_the_targets_links_and_counts_them) {
    RecordingControl c;
    EXPECT_EQ(apply_fault(spec(FaultAction::drop_link), Target::of(FaultTarget::clients), c).at("text"),
              "closed 2 Redis connection(s) of the trial's roles");
    EXPECT_EQ(apply_fault(spec(FaultAction::drop_link), Target::role("C1"), c).at("dropped"), 2);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"drop_links clients", "drop_links C1"}));
}

TEST(FaultCompositionsTest, link_faults_set_the_roles_link_and_heal_reports_what_the_blackhole_held) {
    RecordingControl c;
    FaultSpec hang = spec(FaultAction::blackhole);
    hang.link = LinkServer::postgres;
    EXPECT_EQ(apply_fault(hang, Target::role("C1"), c).at("text"),
              "link: C1 ↔ postgres blackhole: its bytes are taken and neither forwarded nor answered; its calls hang");
    EXPECT_TRUE(c.link_modes.at("C1/postgres").blackhole);
    c.held = 93;
    FaultSpec heal = spec(FaultAction::heal);
    heal.link = LinkServer::postgres;
    const json healed = apply_fault(heal, Target::role("C1"), c);
    EXPECT_EQ(healed.at("text"), "link: C1 ↔ postgres heal: the link carries again; 93 bytes held flowed on");
    EXPECT_EQ(c.link_modes.at("C1/postgres"), LinkMode{});
    FaultSpec slow = spec(FaultAction::delay);
    slow.ms = 250;
    EXPECT_EQ(apply_fault(slow, Target::role("C2"), c).at("text"),
              "link: C2 ↔ redis delay 250 ms: every reply reaches C2 250 ms late");
    EXPECT_EQ(c.link_modes.at("C2/redis").delay, Millis{250});
    EXPECT_EQ(c.calls, (std::vector<std::string>{"set_link C1 postgres blackhole=true delay=0",
                                                 "set_link C1 postgres blackhole=false delay=0",
                                                 "set_link C2 redis blackhole=false delay=250"}));
}

TEST(FaultCompositionsTest, flood_writes_its_keys_in_batches_under_the_trials_prefix_and_counts_oom_refusals) {
    RecordingControl c;
    c.oom_from = 430;
    FaultSpec f = spec(FaultAction::flood);
    f.bytes = 450 * 1024;
    f.db = 1;
    const json d = apply_fault(f, Target::of(FaultTarget::redis_cache), c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"commands redis-cache db=1 INFO×1", "commands redis-cache db=1 SET×200",
                                                 "commands redis-cache db=1 SET×200", "commands redis-cache db=1 SET×50",
                                                 "commands redis-cache db=1 INFO×1"}));
    EXPECT_EQ(c.last_key, "t1:cache:view:449");
    EXPECT_EQ(d.at("oom_errors"), 20);
    EXPECT_EQ(d.at("evicted_keys"), 0);
    EXPECT_EQ(d.at("policy"), "noeviction");
    EXPECT_EQ(d.at("db"), 1);
    EXPECT_NE(d.at("text").get<std::string>().find("into the cache's own instance (maxmemory 3.0 MB, noeviction)"),
              std::string::npos)
        << d.at("text");

    // Any other error reply is no figure of the lab's: the harness failed.
    c.refusal = "WRONGTYPE Operation against a key holding the wrong kind of value";
    EXPECT_THROW(apply_fault(f, kRedis, c), HarnessError);
}

TEST(FaultCompositionsTest, snapshot_sends_bgsave_and_waits_until_a_save_has_finished) {
    RecordingControl c;
    c.bgsave_polls = 3;
    const Nanos t0 = c.now();
    const json d = apply_fault(spec(FaultAction::snapshot), kRedis, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"commands redis db=-1 INFO×1", "commands redis db=-1 BGSAVE×1",
                                                 "commands redis db=-1 INFO×1", "commands redis db=-1 DBSIZE×1"}));
    EXPECT_EQ(d.at("keys"), 3);
    EXPECT_EQ(c.now() - t0, Millis{5});  // one wait between the polls

    RecordingControl never;
    never.bgsave_polls = 1'000'000;
    EXPECT_THROW(apply_fault(spec(FaultAction::snapshot), kRedis, never), HarnessError);  // 10 s, then the harness fails
}

TEST(FaultCompositionsTest, observe_only_describes) {
    RecordingControl c;
    const json d = apply_fault(spec(FaultAction::observe), kRedis, c);
    EXPECT_EQ(c.calls, (std::vector<std::string>{"describe redis"}));
    EXPECT_EQ(d, (json{{"keys", 3}, {"persistence", "appendonly no"}, {"text", "redis: 3 keys (appendonly no)"}}));
}

// Every action of the table, on every kind of target it acts on, is composed of primitives the
// recording Control answers: a row added without its composition, or composed of something else,
// fails here.
TEST(FaultCompositionsTest, every_action_on_every_target_it_acts_on_is_composed_of_primitives) {
    const std::vector<Target> targets = {Target::role("C1"),
                                         kRedis,
                                         Target::of(FaultTarget::redis_replica),
                                         Target::of(FaultTarget::redis_cache),
                                         Target::of(FaultTarget::postgres),
                                         Target::of(FaultTarget::clients),
                                         Target{FaultTarget::redis_cluster_master, "", 1}};
    int composed = 0;
    for (const auto& name : fault_action_names()) {
        const FaultAction action = *fault_action_named(name);
        for (const auto& t : targets) {
            if (fault_target_refusal(action, t.kind)) continue;
            RecordingControl c;
            FaultSpec f = spec(action);
            f.bytes = 4096;
            if (action == FaultAction::resume) c.frozen.insert(target_name(t));
            json d;
            EXPECT_NO_THROW(d = apply_fault(f, t, c)) << name << " " << target_name(t);
            EXPECT_TRUE(d.contains("text") && !d.at("text").get<std::string>().empty()) << name << " " << target_name(t);
            EXPECT_FALSE(c.calls.empty()) << name << " " << target_name(t) << " asked nothing of the world";
            ++composed;
        }
    }
    EXPECT_GE(composed, 20);
}

}  // namespace fault_compositions_test
}  // namespace relab
