#include "roles/idem_client.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "roles/idem_middleware.h"

namespace relab {

namespace {

struct ScheduledSend {
    int64_t at_ms = 0;
    size_t request = 0;
    int send = 1;  // 1: the first send, 2..: resends of the same request
};

class IdemClientRole {
public:
    IdemClientRole(const RoleSettings& s, const IdemClient& spec, RolePorts& p)
        : m_s(s), m_spec(spec), m_p(p), m_middleware(p.kv, p.clock, p.history, spec.name, s.idem_middleware, s.idem_store_outages),
          m_requests(idem_client_requests(spec)), m_attempts(m_requests.size(), 0) {}

    void run(Millis barrier_timeout) {
        const Nanos origin = wait_for_start(barrier_timeout);
        std::vector<ScheduledSend> schedule;
        for (size_t i = 0; i < m_requests.size(); ++i)
            for (size_t k = 0; k < m_requests[i].send_at_ms.size(); ++k)
                schedule.push_back({m_requests[i].send_at_ms[k], i, static_cast<int>(k + 1)});
        std::stable_sort(schedule.begin(), schedule.end(),
                         [](const ScheduledSend& a, const ScheduledSend& b) { return a.at_ms < b.at_ms; });
        for (const auto& send : schedule) {
            const Nanos jitter = Micros{m_spec.arrival_jitter_us > 0 ? m_p.rng.uniform(0, m_spec.arrival_jitter_us) : 0};
            const Nanos due = origin + Millis{send.at_ms} + jitter;
            const Nanos now = m_p.clock.now();
            if (due > now) m_p.clock.sleep_for(due - now);
            const std::string& fault = m_requests[send.request].resend_after_fault;
            if (send.send > 1 && !fault.empty()) wait_for_fault(fault, barrier_timeout * 3);
            send_with_retries(send);
        }
    }

private:
    void record(Op op, nlohmann::json data) {
        m_p.history.record(HistoryRecord{0, m_p.clock.now().count(), m_spec.name, op, std::move(data)});
    }

    Nanos wait_for_start(Millis timeout) {
        m_p.kv.set(kIdemReadyKey + m_spec.name, "1", KvSetOptions{});
        const Nanos started = m_p.clock.now();
        for (;;) {
            if (auto go = m_p.kv.get(kIdemGoKey)) return Nanos{std::stoll(*go)};
            if (m_p.clock.now() - started > timeout)
                throw std::runtime_error(fmt::format("client {}: no start signal within {} ms", m_spec.name, timeout.count()));
            m_p.clock.sleep_for(Millis{1});
        }
    }

    // Polls the runner's flag; the server may be down meanwhile (that is the fault), so errors
    // of the store only mean "not yet".
    void wait_for_fault(const std::string& name, Millis timeout) {
        const Nanos started = m_p.clock.now();
        for (;;) {
            try {
                if (m_p.kv.exists(kIdemFaultDoneKey + name)) return;
            } catch (const KvError&) {
            }
            if (m_p.clock.now() - started > timeout)
                throw std::runtime_error(fmt::format("client {}: fault {} not done within {} ms", m_spec.name, name,
                                                     timeout.count()));
            m_p.clock.sleep_for(Millis{5});
        }
    }

    void send_with_retries(const ScheduledSend& send) {
        const IdemRequest& q = m_requests[send.request];
        const std::string label = fmt::format("{}#{}", m_spec.name, send.request + 1);
        const std::string key_format = q.key_format.value_or(m_s.idem_middleware.key_format);
        for (int k = 1;; ++k) {
            const int attempt = ++m_attempts[send.request];
            record(Op::send, {{"request", label},
                            {"user_id", q.user_id},
                            {"client_key", q.client_key},
                            {"payload", q.payload},
                            {"attempt", attempt},
                            {"send", send.send}});
            const IdemHttpResponse r = m_middleware.handle({q.user_id, q.client_key, q.payload}, key_format,
                                                           [&] { return place_order(q, attempt); });
            record(Op::answer, {{"request", label},
                              {"user_id", q.user_id},
                              {"attempt", attempt},
                              {"code", r.code},
                              {"body", r.body},
                              {"source", r.source}});
            // Answers whose body says a retry cannot help (the order exists; the key is another
            // caller's) end the retries whatever their status code.
            if (r.source == "layer4" || r.source == "other_user") return;
            const auto& retry = m_spec.retry;
            if (k >= retry.max_attempts ||
                std::find(retry.on_codes.begin(), retry.on_codes.end(), r.code) == retry.on_codes.end())
                return;
            m_p.clock.sleep_for(Millis{retry.every_ms});
        }
    }

    // The business logic: work, then INSERT INTO orders. The orders table keys a request by the
    // user and the client's key, whatever Redis key format the middleware uses.
    IdemHttpResponse place_order(const IdemRequest& q, int attempt) {
        m_p.clock.sleep_for(Millis{q.work_ms.value_or(m_s.idem_middleware.work_ms)});
        if (std::find(q.fail_attempts.begin(), q.fail_attempts.end(), attempt) != q.fail_attempts.end()) {
            record(Op::business_error, {{"attempt", attempt}, {"reason", "injected failure"}});
            throw BusinessLogicFailure("the business logic failed (injected)");
        }
        const std::string idem_key = fmt::format("{}:{}", q.user_id, q.client_key);
        try {
            const int64_t id = m_p.order_table->place_order(q.user_id, idem_key, q.payload);
            record(Op::order, {{"order_id", id}, {"idem_key", idem_key}});
            return {201, nlohmann::json{{"order_id", id}}.dump(), "created"};
        } catch (const DuplicateOrderError& e) {
            record(Op::order, {{"refused", true}, {"idem_key", idem_key}, {"reason", e.what()}});
            throw;
        }
    }

    const RoleSettings& m_s;
    const IdemClient& m_spec;
    RolePorts& m_p;
    IdemMiddleware m_middleware;
    std::vector<IdemRequest> m_requests;  // the client's, its "generate" block made into requests
    std::vector<int> m_attempts;          // per request, over all its sends
};

}  // namespace

std::vector<std::string> idem_keys_due(const Scenario& s, int64_t at_ms) {
    std::vector<std::string> keys;
    for (const auto& c : s.idem().clients)
        for (const auto& q : idem_client_requests(c)) {
            if (q.send_at_ms.front() > at_ms) continue;
            const std::string key = idem_key_for(q.key_format.value_or(s.idem().middleware.key_format), q.user_id,
                                                 q.client_key, payload_hash(q.payload));
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
    return keys;
}

int64_t idem_activity_budget_ms(const Scenario& s) {
    int64_t budget = 0;
    for (const auto& c : s.idem().clients) {
        int64_t t = 0;
        for (const auto& q : idem_client_requests(c)) {
            t = std::max(t, q.send_at_ms.back());
            const int64_t work = q.work_ms.value_or(s.idem().middleware.work_ms);
            t += static_cast<int64_t>(q.send_at_ms.size()) * c.retry.max_attempts * (c.retry.every_ms + work + 200);
        }
        budget = std::max(budget, t);
    }
    return budget;
}

void run_idem_client(const RoleSettings& s, const std::string& actor, RolePorts& ports, Millis barrier_timeout) {
    const auto it = std::find_if(s.idem_clients.begin(), s.idem_clients.end(),
                                 [&](const IdemClient& c) { return c.name == actor; });
    if (it == s.idem_clients.end()) throw std::invalid_argument("no idempotency client named '" + actor + "'");
    if (!ports.order_table) throw std::logic_error("the idem_client role needs the orders table port");
    IdemClientRole(s, *it, ports).run(barrier_timeout);
}

}  // namespace relab
