#include "scenario/generate.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "ports/seeded_rng.h"
#include "util/check.h"

namespace relab {

namespace {

int64_t ms_as_us(double ms) { return std::llround(ms * 1000.0); }

std::string ms_text(int64_t us) { return fmt::format("{:g} ms", static_cast<double>(us) / 1000.0); }

// A job's cost drawn per event: fixed, uniform in [a, b], or log-normal through its p50 a and p99 b
// (sigma = ln(p99 / p50) / 2.3263, the standard normal's 99th percentile).
struct CostDraw {
    JobCostSpec::Dist dist = JobCostSpec::Dist::fixed;
    int64_t a_us = 0, b_us = 0;
    double sigma = 0;

    explicit CostDraw(const JobCostSpec& c) : dist(c.dist) {
        switch (dist) {
            case JobCostSpec::Dist::fixed: a_us = ms_as_us(c.ms.value_or(0)); break;
            case JobCostSpec::Dist::uniform:
                a_us = ms_as_us(c.min_ms.value_or(0));
                b_us = ms_as_us(c.max_ms.value_or(0));
                break;
            case JobCostSpec::Dist::lognormal:
                a_us = ms_as_us(c.p50_ms.value_or(0));
                b_us = ms_as_us(c.p99_ms.value_or(0));
                RELAB_CHECK(a_us > 0 && b_us >= a_us, "a log-normal cost the loader let through without p50 <= p99");
                sigma = std::log(static_cast<double>(b_us) / static_cast<double>(a_us)) / 2.3263478740408408;
                break;
        }
    }

    std::string text() const {
        switch (dist) {
            case JobCostSpec::Dist::fixed: return "fixed " + ms_text(a_us);
            case JobCostSpec::Dist::uniform: return fmt::format("uniform {}–{}", ms_text(a_us), ms_text(b_us));
            case JobCostSpec::Dist::lognormal: return fmt::format("log-normal p50 {}, p99 {}", ms_text(a_us), ms_text(b_us));
        }
        return "";
    }

    int64_t draw(SeededRng& rng) const {
        switch (dist) {
            case JobCostSpec::Dist::fixed: return a_us;
            case JobCostSpec::Dist::uniform: return rng.uniform(a_us, b_us);
            case JobCostSpec::Dist::lognormal: {
                // Box-Muller over two uniform draws in (0, 1]: the same numbers on every compiler.
                const double u1 = (static_cast<double>(rng.next() >> 11) + 1.0) / 9007199254740993.0;
                const double u2 = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
                const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
                return std::llround(static_cast<double>(a_us) * std::exp(sigma * z));
            }
        }
        return a_us;
    }
};

std::string arrival_text(const GenerateSpec& g) {
    if (g.arrival && g.arrival->process == ArrivalSpec::Process::poisson)
        return fmt::format("{} orders/s, Poisson", g.arrival->orders_per_s);
    if (g.arrival && g.arrival->orders_per_s > 0) return fmt::format("{} orders/s", g.arrival->orders_per_s);
    if (g.every_ms > 0) return fmt::format("an order every {}", ms_text(g.every_ms * 1000));
    return "burst";
}

// When each order arrives, in µs from the first: k intervals, or a Poisson process's exponential
// gaps of the same mean (inverse transform of a uniform in (0, 1], the same numbers on every compiler).
std::vector<int64_t> arrivals_us(const GenerateSpec& g, uint64_t seed) {
    const int64_t every_us = arrival_interval_us(g);
    std::vector<int64_t> at(static_cast<size_t>(g.orders));
    if (!g.arrival || g.arrival->process == ArrivalSpec::Process::steady) {
        for (int64_t k = 0; k < g.orders; ++k) at[static_cast<size_t>(k)] = every_us * k;
        return at;
    }
    SeededRng rng(derive_seed(seed, "arrival"));
    double t = 0;
    for (int64_t k = 0; k < g.orders; ++k) {
        at[static_cast<size_t>(k)] = std::llround(t);
        const double u = (static_cast<double>(rng.next() >> 11) + 1.0) / 9007199254740993.0;
        t += -std::log(u) * static_cast<double>(every_us);
    }
    RELAB_CHECK(std::is_sorted(at.begin(), at.end()), "Poisson arrivals out of order");
    return at;
}

GeneratedWorkload expand(const GenerateSpec& g, uint64_t seed) {
    GeneratedWorkload w;
    const std::vector<int64_t> arrival = arrivals_us(g, seed);
    w.orders.reserve(static_cast<size_t>(g.orders));
    for (int64_t k = 0; k < g.orders; ++k) w.orders.push_back(OrderSpec{.id = g.first_id + k, .expected_final = {g.expected_final}});
    std::optional<CostDraw> cost;
    if (g.job_cost) cost.emplace(*g.job_cost);
    SeededRng rng(derive_seed(seed, "job_cost"));
    w.events.reserve(static_cast<size_t>(g.orders) * g.events.size());
    for (int64_t k = 0; k < g.orders; ++k)
        for (const auto& t : g.events) {
            EventSpec e{.order = g.first_id + k, .type = t.type, .version = t.version, .at_ms = t.at_ms + arrival[static_cast<size_t>(k)] / 1000};
            if (cost) e.cost_us = cost->draw(rng);
            w.events.push_back(std::move(e));
        }
    for (const SlowJob& j : g.slow_jobs) {
        auto it = std::find_if(w.events.begin(), w.events.end(),
                               [&](const EventSpec& e) { return e.order == j.order && e.type == j.type; });
        RELAB_CHECK(it != w.events.end(), "a slow job the loader let through names no generated event");
        it->cost_us = j.ms * 1000;
    }
    w.load = LoadSpec{.enabled = g.arrival.has_value() || g.job_cost.has_value() || !g.slow_jobs.empty(),
                      .arrival = arrival_text(g), .job_cost = cost ? cost->text() : "", .slow_jobs = g.slow_jobs};
    return w;
}

}  // namespace

int64_t arrival_interval_us(const GenerateSpec& g) {
    if (g.arrival) return g.arrival->orders_per_s > 0 ? 1'000'000 / g.arrival->orders_per_s : 0;
    return g.every_ms * 1000;
}

// A lab's mutants are read right after it, and most leave "generate" and the seed as they were:
// drawing 30,000 job costs again for each was most of the time `relab` took to read the scenario
// folder, so the last expansion is kept and a repeat copies it.
GeneratedWorkload expand_generate(const GenerateSpec& g, uint64_t seed) {
    struct Last {
        std::mutex mutex;
        std::optional<std::pair<GenerateSpec, uint64_t>> key;
        GeneratedWorkload workload;
    };
    static Last last;
    {
        std::lock_guard<std::mutex> lock(last.mutex);
        if (last.key && last.key->second == seed && last.key->first == g) return last.workload;
    }
    GeneratedWorkload w = expand(g, seed);
    std::lock_guard<std::mutex> lock(last.mutex);
    last.key.emplace(g, seed);
    last.workload = w;
    return w;
}

}  // namespace relab
