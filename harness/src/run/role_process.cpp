#include "run/role_process.h"

#include <fstream>
#include <iostream>

#include "history/file_history.h"
#include "ports/seeded_rng.h"
#include "real/pg_client.h"
#include "real/real_clock.h"
#include "real/redis_client.h"
#include "roles/roles.h"
#include "scenario/scenario.h"

namespace relab {

nlohmann::json role_config_to_json(const RoleConfig& c) {
    return {{"role", c.role},
            {"actor", c.actor},
            {"trial", c.trial},
            {"seed", c.seed},
            {"redis", {{"host", c.redis.host}, {"port", c.redis.port}, {"password", c.redis.password}, {"db", c.redis.db}}},
            {"pg",
             {{"host", c.pg.host},
              {"port", c.pg.port},
              {"user", c.pg.user},
              {"password", c.pg.password},
              {"dbname", c.pg.dbname}}},
            {"schema", c.schema},
            {"key_prefix", c.key_prefix},
            {"barrier_prefix", c.barrier_prefix},
            {"scenario", c.scenario},
            {"scenario_file", c.scenario_file},
            {"history_path", c.history_path},
            {"barrier_timeout_ms", c.barrier_timeout_ms}};
}

RoleConfig role_config_from_json(const nlohmann::json& j) {
    RoleConfig c;
    c.role = j.at("role");
    c.actor = j.at("actor");
    c.trial = j.at("trial");
    c.seed = j.at("seed");
    const auto& r = j.at("redis");
    c.redis.host = r.at("host");
    c.redis.port = r.at("port");
    c.redis.password = r.at("password");
    c.redis.db = r.at("db");
    const auto& p = j.at("pg");
    c.pg.host = p.at("host");
    c.pg.port = p.at("port");
    c.pg.user = p.at("user");
    c.pg.password = p.at("password");
    c.pg.dbname = p.at("dbname");
    c.schema = j.at("schema");
    c.key_prefix = j.at("key_prefix");
    c.barrier_prefix = j.at("barrier_prefix");
    c.scenario = j.at("scenario");
    c.scenario_file = j.at("scenario_file");
    c.history_path = j.at("history_path");
    c.barrier_timeout_ms = j.at("barrier_timeout_ms");
    return c;
}

namespace {

// Stamps the trial number on every record a role writes.
class TrialHistory : public History {
public:
    TrialHistory(History& inner, int trial) : m_inner(inner), m_trial(trial) {}
    void record(HistoryRecord r) override {
        r.trial = m_trial;
        m_inner.record(std::move(r));
    }

private:
    History& m_inner;
    int m_trial;
};

}  // namespace

int run_role_process(const std::string& config_path) {
    try {
        std::ifstream in(config_path);
        if (!in) {
            std::cerr << "relab role: cannot read " << config_path << "\n";
            return 2;
        }
        const RoleConfig c = role_config_from_json(nlohmann::json::parse(in));
        const Scenario s = parse_scenario(c.scenario.dump(), c.scenario_file);

        RedisClient redis(c.redis);
        const RedisFeatures features = detect_redis_features(redis);
        PgSession pg(c.pg, c.schema);
        RealClock clock;
        SeededRng rng(c.seed);
        RedisNamespace ns{c.key_prefix};
        RealStream stream(redis, ns, c.barrier_prefix);
        RealKv kv(redis, ns, features.delex);
        RealOrderStore orders(pg);
        FileHistory file(c.history_path);
        TrialHistory history(file, c.trial);
        RealOutbox outbox(pg);
        RolePorts ports{clock, rng, stream, kv, orders, outbox, history};
        run_role(c.role, c.actor, s, ports, Millis{c.barrier_timeout_ms});
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab role: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace relab
