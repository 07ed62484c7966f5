#include "families/session_runner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "clients/pg_client.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;

std::string check_step(const SessionStep& step, const StepOutcome& out) {
    if (step.expect_sqlstate) {
        if (out.sqlstate != *step.expect_sqlstate)
            return fmt::format("expected an error with SQLSTATE {}, got {}", *step.expect_sqlstate,
                               out.sqlstate.empty() ? out.tag : out.sqlstate + " " + out.error);
    } else if (!out.sqlstate.empty() || !out.error.empty()) {
        return fmt::format("unexpected error {}: {}", out.sqlstate, out.error);
    }
    if (step.expect && out.tag != *step.expect) return fmt::format("expected {}, got {}", *step.expect, out.tag);
    const int64_t ms = out.duration_us / 1000;
    if (step.expect_wait_min_ms && ms < *step.expect_wait_min_ms)
        return fmt::format("expected to wait at least {} ms, took {} ms", *step.expect_wait_min_ms, ms);
    if (step.expect_wait_max_ms && ms > *step.expect_wait_max_ms)
        return fmt::format("expected to wait at most {} ms, took {} ms", *step.expect_wait_max_ms, ms);
    return {};
}

// The case's time: every step's start is µs from the moment the sessions were opened.
struct CaseClock {
    SteadyClock::time_point origin = SteadyClock::now();
    int64_t since_origin_us() const {
        return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - origin).count();
    }
};

// One session's connection: PostgreSQL or Redis, the other null.
struct CaseSession {
    std::unique_ptr<PgSession> pg;
    std::unique_ptr<RedisSession> redis;
};

std::vector<CaseSession> open_sessions(const SessionCase& c, const PgEndpoint& pg, const std::string& schema,
                                       const RedisSessionTarget* redis) {
    std::vector<CaseSession> sessions;
    for (const auto& spec : c.sessions) {
        const bool is_redis = spec.client == "redis";
        if (is_redis && !redis) throw std::invalid_argument("a Redis session needs a Redis server");
        sessions.push_back({is_redis ? nullptr : std::make_unique<PgSession>(pg, schema),
                            is_redis ? std::make_unique<RedisSession>(*redis) : nullptr});
    }
    return sessions;
}

// One SQL statement, timed; an exception from the client is the step's error (SQLSTATE "?????").
StepOutcome run_sql_step(PgSession& session, const std::string& name, const SessionStep& step,
                         const CaseClock& clock) {
    StepOutcome out;
    out.session = name;
    out.sql = step.sql;
    out.start_us = clock.since_origin_us();
    SqlStepResult r;
    try {
        r = session.run(step.sql);
    } catch (const std::exception& e) {
        r.error = e.what();
        r.sqlstate = "?????";
    }
    out.duration_us = clock.since_origin_us() - out.start_us;
    out.tag = r.tag;
    out.sqlstate = r.sqlstate;
    out.error = r.error;
    out.columns = r.columns;
    out.rows = r.rows;
    out.failure = check_step(step, out);
    out.ok = out.failure.empty();
    return out;
}

// A session's steps in order, each at its at_ms when it has one; runs on the session's own thread.
std::vector<StepOutcome> run_session_steps(const SessionSpec& spec, CaseSession& session, const CaseClock& clock) {
    std::vector<StepOutcome> steps;
    for (const auto& step : spec.steps) {
        if (step.at_ms >= 0) std::this_thread::sleep_until(clock.origin + std::chrono::milliseconds(step.at_ms));
        if (step.redis) {
            const int64_t start_us = clock.since_origin_us();
            StepOutcome out = session.redis->run(spec.name, *step.redis);
            out.start_us = start_us;
            steps.push_back(std::move(out));
            continue;
        }
        steps.push_back(run_sql_step(*session.pg, spec.name, step, clock));
    }
    return steps;
}

// The case's final query against its expected rows: a difference makes the case wrong.
void check_final_rows(const SessionCase& c, const PgEndpoint& pg, const std::string& schema, CaseOutcome& outcome) {
    PgSession final_session(pg, schema);
    const SqlStepResult final_rows = final_session.exec(c.final_sql);
    outcome.columns = final_rows.columns;
    outcome.final_rows = final_rows.rows;
    if (!c.expect_rows.empty() && outcome.final_rows != c.expect_rows) {
        outcome.wrong = true;
        std::string got;
        for (const auto& row : outcome.final_rows) got += fmt::format("({}) ", fmt::join(row, ", "));
        outcome.failures.push_back("final rows differ from the expected ones: got " + got);
    }
}

}  // namespace

CaseOutcome run_session_case(const SessionCase& c, const PgEndpoint& pg, const std::string& schema,
                             const RedisSessionTarget* redis) {
    CaseOutcome outcome;
    outcome.title = c.title;
    outcome.title_vi = c.title_vi;
    if (!c.setup_sql.empty()) {
        PgSession setup(pg, schema);
        for (const auto& sql : c.setup_sql) setup.exec(sql);
    }

    std::vector<CaseSession> sessions = open_sessions(c, pg, schema, redis);
    std::vector<std::vector<StepOutcome>> per_session(c.sessions.size());
    const CaseClock clock;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < c.sessions.size(); ++i)
        threads.emplace_back([&, i] { per_session[i] = run_session_steps(c.sessions[i], sessions[i], clock); });
    for (auto& t : threads) t.join();
    // PostgreSQL's sessions close first; then the keys the Redis sessions touched are removed.
    for (auto& session : sessions) session.pg.reset();
    for (auto& session : sessions)
        if (session.redis) session.redis->remove_touched_keys();
    sessions.clear();

    for (auto& steps : per_session)
        for (auto& s : steps) outcome.steps.push_back(std::move(s));
    std::stable_sort(outcome.steps.begin(), outcome.steps.end(),
                     [](const StepOutcome& a, const StepOutcome& b) { return a.start_us < b.start_us; });
    for (const auto& s : outcome.steps)
        if (!s.ok) outcome.failures.push_back(fmt::format("session {}, `{}`: {}", s.session, s.sql, s.failure));

    if (!c.final_sql.empty()) check_final_rows(c, pg, schema, outcome);
    return outcome;
}

}  // namespace relab
