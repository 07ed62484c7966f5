// RoleSettings: what the roles read of their lab, resolved once by the parent and handed to every
// role as it is (a role process gets it as JSON, the simulator's fibers as the struct).
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "roles/role_settings.h"
#include "process/role_process.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "sim_fixture.h"

namespace relab {
namespace role_settings_test {

RoleSettings through_json(const RoleSettings& r) {
    // As the config file carries it: dumped to text and parsed back.
    return role_settings_from_json(nlohmann::json::parse(role_settings_to_json(r).dump()));
}

std::string scenarios_dir() { return std::string(RELAB_SOURCE_DIR) + "/scenarios"; }

TEST(RoleSettingsTest, every_shipped_scenario_and_mutant_round_trips_through_json_unchanged) {
    const std::vector<Scenario> labs = load_scenario_dir(scenarios_dir());
    ASSERT_GE(labs.size(), 49u);
    size_t checked = 0;
    for (const Scenario& s : labs) {
        std::vector<Scenario> variants = {s};
        for (const Mutant& m : s.mutants) variants.push_back(apply_mutant(s, m));
        for (const Scenario& v : variants) {
            const RoleSettings r = role_settings(v);
            EXPECT_TRUE(through_json(r) == r) << v.id << (v.mutant.empty() ? "" : " mutant " + v.mutant);
            EXPECT_EQ(role_settings_to_json(through_json(r)), role_settings_to_json(r)) << v.id;
            ++checked;
        }
    }
    EXPECT_GT(checked, labs.size());
}

// write.isolation and its retries reach the role process: each level, and a count that is not the default.
TEST(RoleSettingsTest, the_write_isolation_and_its_retries_round_trip_through_json) {
    for (const auto& row : k_write_isolations) {
        RoleSettings r;
        r.write.mode = WriteMode::cas;
        r.write.isolation = row.value;
        r.write.serialization_retries = 7;
        const RoleSettings back = through_json(r);
        EXPECT_EQ(back.write.isolation, row.value) << row.name;
        EXPECT_EQ(back.write.serialization_retries, 7) << row.name;
        EXPECT_TRUE(back == r) << row.name;
    }
    // The shipped isolation labs and their mutants (scenarios/load, run only when named).
    size_t labs = 0;
    for (const Scenario& s : load_scenario_dir(scenarios_dir() + "/load")) {
        if (s.flow().write.isolation == WriteIsolation::none) continue;
        ++labs;
        for (const Mutant& m : s.mutants) {
            const RoleSettings r = role_settings(apply_mutant(s, m));
            EXPECT_TRUE(through_json(r) == r) << s.id << " mutant " << m.name;
        }
        EXPECT_TRUE(through_json(role_settings(beside_scenario(s))) == role_settings(beside_scenario(s))) << s.id;
    }
    EXPECT_GE(labs, 2u);
}

// A recovery mode is a line of RecoverySpec's description: its value reaches the role process by
// that line alone, so every field, moved away from its default, must come back, and each is
// written under its key.
TEST(RoleSettingsTest, every_recovery_field_crosses_to_the_role_process_by_its_description) {
    RoleSettings r;
    r.recovery = RecoverySpec{.pending_first = true, .recreate_group = true,
                              .autoclaim = {.enabled = true, .min_idle_ms = 300, .every_ms = 40, .count = 2,
                                            .in = RecoverySpec::Autoclaim::In::consumers},
                              .consumer_name = RecoverySpec::ConsumerName::per_process, .max_deliveries = 3};
    const nlohmann::json j = role_settings_to_json(r).at("recovery");
    for (const auto& key : desc::keys<RecoverySpec>()) EXPECT_TRUE(j.contains(key)) << key;
    for (const auto& key : desc::keys<RecoverySpec::Autoclaim>()) EXPECT_TRUE(j.at("autoclaim").contains(key)) << key;
    EXPECT_TRUE(through_json(r).recovery == r.recovery) << j.dump();
    RoleSettings each = r;
    each.recovery.autoclaim.enabled = false;  // a section that is off crosses as null, its fields at their defaults
    each.recovery.autoclaim = RecoverySpec::Autoclaim{};
    EXPECT_TRUE(through_json(each).recovery == each.recovery);
    EXPECT_TRUE(role_settings_to_json(each).at("recovery").at("autoclaim").is_null());
}

// Every field away from its default, so each one is seen crossing both ways (no shipped lab sets
// all of them).
TEST(RoleSettingsTest, every_field_set_away_from_its_default_round_trips) {
    RoleSettings r;
    r.stream = StreamSpec{"s", "g", 3, 150, StreamSpec::Ack::batch, 700};
    r.events = {EventSpec{7, "created", 1, 0}, EventSpec{7, "shipped", 3, 25}};
    r.job_cost_ms = {{"created", 800}, {"shipped", 5}};
    r.consumers = 5;
    r.write = WriteSpec{WriteMode::cas, VersionSource::entry_id, true, WriteDedupe::aggregate_version};
    r.lock = LockSpec{true, "lk:{order}", 300, 7, {1, 30}};
    r.buffer = BufferSpec{true, 400, BufferSpec::Late::apply};
    r.producer = ProducerSpec{250, 3, 4, WaitSpec{2, 70}, {PublishFailure{7, "created", {1, 2}, {3}}}, true};
    r.dispatcher = DispatcherSpec{true, DispatchOrder::naive, 50, 9, {OutboxFailure{2, {1, 3}}}, DispatchMark::round, 7,
                                  3, DispatchClaim::skip_locked};
    r.recovery.pending_first = true;
    r.recovery.recreate_group = true;
    r.recovery.autoclaim = {true, 300, 40, 2, RecoverySpec::Autoclaim::In::consumers};
    r.redis_faults_scheduled = true;
    r.postgres_faults_scheduled = true;
    IdemRequest q;
    q.user_id = 9;
    q.client_key = "k-1";
    q.payload = "{\"sku\":\"B2\"}";
    q.send_at_ms = {0, 2600};
    q.key_format = "idem:v2:{user_id}:{client_key}";
    q.fail_attempts = {1};
    q.work_ms = 300;
    q.resend_after_fault = "failover";
    IdemRequest plain;  // key_format and work_ms absent: the middleware's own
    plain.client_key = "k-2";
    // A "generate" block crosses as the file gives it; the role makes its requests.
    r.idem_clients = {IdemClient{"A", {q, plain}, IdemGenerate{3, 100, 20, {50}, 9, "{}", "failover"},
                                 IdemRetry{{409, 503}, 100, 7}, 4000}};
    r.idem_middleware = IdemMiddlewareSpec{"x:{hash}", 1000, 5000, true,  true, false,
                                           20,         IdemWait{1, 250, true}, IdemClaim::add_get, 30, true};
    r.idem_store_outages = StoreOutages::scheduled;

    const RoleSettings back = through_json(r);
    EXPECT_TRUE(back == r) << role_settings_to_json(back).dump(2);
    EXPECT_FALSE(back.idem_clients.at(0).requests.at(1).key_format.has_value());
    EXPECT_FALSE(back.idem_clients.at(0).requests.at(1).work_ms.has_value());
    EXPECT_EQ(idem_client_requests(back.idem_clients.at(0)).size(), 5u);
    EXPECT_FALSE(RoleSettings{} == r);  // the comparison sees the fields
}

TEST(RoleSettingsTest, every_write_mode_crosses_by_its_name) {
    for (WriteMode m : {WriteMode::plain, WriteMode::cas, WriteMode::upsert, WriteMode::insert_then_update}) {
        RoleSettings r;
        r.write.mode = m;
        r.write.side_effect = m == WriteMode::upsert;
        const nlohmann::json j = role_settings_to_json(r);
        EXPECT_EQ(j.at("write").at("mode"), to_string(m));
        EXPECT_TRUE(through_json(r).write == r.write) << j.at("write").dump();
    }
}

TEST(RoleSettingsTest, a_config_missing_a_field_is_refused_naming_it) {
    RoleSettings locked;
    locked.lock.enabled = true;
    nlohmann::json j = role_settings_to_json(locked);
    j["lock"].erase("ttl_ms");
    try {
        role_settings_from_json(j);
        FAIL() << "accepted settings without lock.ttl_ms";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("/lock/ttl_ms"), std::string::npos) << e.what();
    }
    nlohmann::json without = role_settings_to_json(RoleSettings{});
    without.erase("stream");
    EXPECT_THROW(role_settings_from_json(without), std::invalid_argument);
    nlohmann::json k = role_settings_to_json(RoleSettings{});
    k["write"]["mode"] = "sometimes";
    EXPECT_THROW(role_settings_from_json(k), std::invalid_argument);
}

TEST(RoleSettingsTest, settings_are_resolved_from_the_scenario_the_roles_need_it_for) {
    const Scenario restart = test::scenario("08i-restart-volatile.json");
    EXPECT_TRUE(role_settings(restart).redis_faults_scheduled);
    EXPECT_TRUE(role_settings(restart).recovery.recreate_group);
    EXPECT_FALSE(role_settings(test::scenario("08h-claim-plain.json")).redis_faults_scheduled);
    const Scenario failover = test::scenario("idem-t-failover-async.json");
    EXPECT_EQ(role_settings(failover).idem_store_outages, StoreOutages::scheduled);
    EXPECT_EQ(role_settings(failover).idem_clients.size(), failover.idem().clients.size());
    EXPECT_EQ(role_settings(test::scenario("idem-f-mw-double-click.json")).idem_store_outages,
              StoreOutages::none_scheduled);
}

// A change made to the loaded Scenario in the parent (a mutant, an override, a test) is what the
// role processes get: their config carries the resolved settings, not the scenario file.
TEST(RoleSettingsTest, a_change_to_the_loaded_scenario_reaches_the_role_config) {
    Scenario s = test::scenario("08a-baseline.json");
    ASSERT_EQ(s.flow().job_cost_ms.at("created"), 800);
    s.flow().job_cost_ms["created"] = 0;
    s.flow().consumers = 3;
    s.flow().lock.enabled = true;
    s.flow().stream.block_ms = 123;

    RoleConfig c;
    c.role = "consumer";
    c.actor = "C1";
    c.settings = role_settings(s);
    const nlohmann::json written = role_config_to_json(c);
    EXPECT_FALSE(written.contains("scenario")) << "the raw scenario file is not handed to a role";
    const RoleConfig read = role_config_from_json(nlohmann::json::parse(written.dump()));
    EXPECT_TRUE(read.settings == role_settings(s));
    EXPECT_EQ(read.settings.job_cost_ms.at("created"), 0);
    EXPECT_EQ(read.settings.consumers, 3);
    EXPECT_TRUE(read.settings.lock.enabled);
    EXPECT_EQ(read.settings.stream.block_ms, 123);
    // The file itself still says otherwise: re-parsing it in the role would have lost the change.
    EXPECT_EQ(s.source.at("job_cost_ms").at("created"), 800);
}

// The config file a role reads from the run's temp dir holds no password; the passwords travel in
// the role's environment and come back into the same places.
TEST(RoleSettingsTest, passwords_leave_the_role_config_file_and_come_back_from_the_environment) {
    RoleConfig c;
    c.role = "consumer";
    c.actor = "C1";
    c.redis.password = "redis-Secret-1";
    c.pg.password = "pg-Secret-2";
    c.redis_sentinels.resize(2);
    c.redis_sentinels[1].password = "sentinel-Secret-3";
    c.redis_master_name = "m";
    c.settings = role_settings(test::scenario("08a-baseline.json"));
    const SplitRoleConfig split = split_role_config(c);
    const std::string file = split.file.dump();
    for (const char* secret : {"redis-Secret-1", "pg-Secret-2", "sentinel-Secret-3"}) {
        EXPECT_EQ(file.find(secret), std::string::npos) << secret << " is in the file: " << file;
        EXPECT_NE(split.secrets.find(secret), std::string::npos) << secret;
    }
    const RoleConfig back = join_role_config(nlohmann::json::parse(file), split.secrets);
    EXPECT_EQ(back.redis.password, "redis-Secret-1");
    EXPECT_EQ(back.pg.password, "pg-Secret-2");
    EXPECT_EQ(back.redis_sentinels.at(0).password, "");
    EXPECT_EQ(back.redis_sentinels.at(1).password, "sentinel-Secret-3");
    EXPECT_TRUE(back.settings == c.settings);
    // Without the environment the role gets no password (and its AUTH fails loudly).
    EXPECT_EQ(join_role_config(nlohmann::json::parse(file), "").redis.password, "");
}

// The simulator's fibers run on role_settings() of the Scenario they are given, too: 08a with
// created's job made instant is no longer wrong, although its file says 800 ms.
TEST(RoleSettingsTest, a_change_to_the_loaded_scenario_reaches_the_simulated_roles) {
    Scenario s = test::scenario("08a-baseline.json");
    EXPECT_EQ(test::run_sim(s, 5).wrong, 5);
    s.flow().job_cost_ms["created"] = 0;
    const LabResult changed = test::run_sim(s, 5);
    EXPECT_EQ(changed.wrong, 0);
    for (const auto& t : changed.trials) EXPECT_FALSE(t.wrong) << "trial " << t.trial;
}

}  // namespace role_settings_test
}  // namespace relab
