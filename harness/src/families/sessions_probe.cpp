// The scripted-session labs as a probe: trial k runs the lab's k-th case, its Redis keys under a
// prefix of their own, removed after it.
#include <fmt/format.h>

#include "clients/pg_client.h"
#include "clients/redis_client.h"
#include "families/probe.h"
#include "families/redis_session.h"
#include "families/session_runner.h"

namespace relab {

namespace {

class SessionsProbe : public ProbeLab {
public:
    SessionsProbe(const Scenario& s, ProbeEnv& env) : m_s(s), m_env(env) {}

    TrialResult trial(int trial, uint64_t) override {
        const SessionCase& c = m_s.sessions().cases.at(static_cast<size_t>(trial - 1));
        const bool exact = c.exact_keys && !m_env.servers.redis_external;
        RedisSessionTarget redis{m_env.servers.redis,
                                 exact ? "" : fmt::format("{}{}:c{}:", m_env.run_prefix, m_s.id, trial),
                                 !m_env.servers.redis_external};
        CaseOutcome out = run_session_case(c, m_env.servers.pg, m_env.schema, &redis);
        if (!redis.prefix.empty()) {
            RedisClient admin(m_env.servers.redis);
            delete_keys_with_prefix(admin, redis.prefix);
        }
        return out;
    }

    void finish(LabResult&) override {
        PgSession cleanup(m_env.servers.pg, m_env.schema);
        cleanup.exec("DROP TABLE IF EXISTS tmp_orders");
    }

private:
    const Scenario& m_s;
    ProbeEnv& m_env;
};

}  // namespace

std::unique_ptr<ProbeLab> open_sessions_probe(const Scenario& s, ProbeEnv& env) {
    return std::make_unique<SessionsProbe>(s, env);
}

}  // namespace relab
