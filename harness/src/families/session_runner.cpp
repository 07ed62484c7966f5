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

    std::vector<std::unique_ptr<PgSession>> sessions;
    std::vector<std::unique_ptr<RedisSession>> redis_sessions;
    for (const auto& spec : c.sessions) {
        const bool is_redis = spec.client == "redis";
        if (is_redis && !redis) throw std::invalid_argument("a Redis session needs a Redis server");
        sessions.push_back(is_redis ? nullptr : std::make_unique<PgSession>(pg, schema));
        redis_sessions.push_back(is_redis ? std::make_unique<RedisSession>(*redis) : nullptr);
    }

    std::vector<std::vector<StepOutcome>> per_session(c.sessions.size());
    const auto origin = SteadyClock::now();
    auto since_origin_us = [&] {
        return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - origin).count();
    };
    std::vector<std::thread> threads;
    for (size_t i = 0; i < c.sessions.size(); ++i) {
        threads.emplace_back([&, i] {
            const auto& spec = c.sessions[i];
            for (const auto& step : spec.steps) {
                if (step.at_ms >= 0) std::this_thread::sleep_until(origin + std::chrono::milliseconds(step.at_ms));
                if (step.redis) {
                    const int64_t start_us = since_origin_us();
                    StepOutcome out = redis_sessions[i]->run(spec.name, *step.redis);
                    out.start_us = start_us;
                    per_session[i].push_back(std::move(out));
                    continue;
                }
                StepOutcome out;
                out.session = spec.name;
                out.sql = step.sql;
                out.start_us = since_origin_us();
                SqlStepResult r;
                try {
                    r = sessions[i]->run(step.sql);
                } catch (const std::exception& e) {
                    r.error = e.what();
                    r.sqlstate = "?????";
                }
                out.duration_us = since_origin_us() - out.start_us;
                out.tag = r.tag;
                out.sqlstate = r.sqlstate;
                out.error = r.error;
                out.columns = r.columns;
                out.rows = r.rows;
                out.failure = check_step(step, out);
                out.ok = out.failure.empty();
                per_session[i].push_back(std::move(out));
            }
        });
    }
    for (auto& t : threads) t.join();
    sessions.clear();
    for (auto& r : redis_sessions)
        if (r) r->remove_touched_keys();
    redis_sessions.clear();

    for (auto& steps : per_session)
        for (auto& s : steps) outcome.steps.push_back(std::move(s));
    std::stable_sort(outcome.steps.begin(), outcome.steps.end(),
                     [](const StepOutcome& a, const StepOutcome& b) { return a.start_us < b.start_us; });
    for (const auto& s : outcome.steps)
        if (!s.ok) outcome.failures.push_back(fmt::format("session {}, `{}`: {}", s.session, s.sql, s.failure));

    if (c.final_sql.empty()) return outcome;
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
    return outcome;
}

}  // namespace relab
