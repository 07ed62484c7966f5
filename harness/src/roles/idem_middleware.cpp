#include "roles/idem_middleware.h"

#include <fmt/format.h>

namespace relab {

namespace {

using ordered_json = nlohmann::ordered_json;

void replace_all(std::string& s, const std::string& what, const std::string& with) {
    for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + with.size()))
        s.replace(pos, what.size(), with);
}

std::string error_body(const std::string& message) { return ordered_json{{"error", message}}.dump(); }

}  // namespace

std::string payload_hash(const std::string& body) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : body) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return fmt::format("{:016x}", h);
}

std::string idem_key_for(const std::string& format, int64_t user_id, const std::string& client_key,
                         const std::string& hash) {
    std::string key = format;
    replace_all(key, "{user_id}", std::to_string(user_id));
    replace_all(key, "{client_key}", client_key);
    replace_all(key, "{hash}", hash);
    return key;
}

std::string state_json(const IdemState& s) {
    ordered_json j = {{"status", s.status}, {"hash", s.hash}};
    if (s.user_id) j["user_id"] = *s.user_id;
    if (s.status == "done") {
        j["code"] = s.code;
        j["body"] = s.body;
    }
    return j.dump();
}

std::optional<IdemState> parse_state(const std::string& value) {
    const auto j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("status") || !j["status"].is_string() || !j.contains("hash") ||
        !j["hash"].is_string())
        return std::nullopt;
    IdemState s;
    s.status = j["status"];
    s.hash = j["hash"];
    if (s.status != "in_progress" && s.status != "done") return std::nullopt;
    if (j.contains("user_id")) {
        if (!j["user_id"].is_number_integer()) return std::nullopt;
        s.user_id = j["user_id"].get<int64_t>();
    }
    if (s.status == "done") {
        if (!j.contains("code") || !j["code"].is_number_integer() || !j.contains("body") || !j["body"].is_string())
            return std::nullopt;
        s.code = j["code"];
        s.body = j["body"];
    }
    return s;
}

namespace {

// decide_claim over a previous value already parsed (`state`: parse_state(*previous)).
ClaimDecision decide_parsed(bool had_previous, const std::optional<IdemState>& state, const std::string& hash,
                            int64_t user_id, bool check_owner) {
    if (!had_previous) return ClaimDecision::first;
    if (!state) return ClaimDecision::unreadable;
    // Before anything else: the stored state is another caller's business (Case 2, fix 2).
    if (check_owner && state->user_id != user_id) return ClaimDecision::other_user;
    // Same key, other payload: the client reused a key. Loud, never a silent second order.
    if (state->hash != hash) return ClaimDecision::mismatch;
    if (state->status == "in_progress") return ClaimDecision::in_progress;
    return ClaimDecision::replay;
}

}  // namespace

ClaimDecision decide_claim(const std::optional<std::string>& previous, const std::string& hash, int64_t user_id,
                           bool check_owner) {
    return decide_parsed(previous.has_value(), previous ? parse_state(*previous) : std::nullopt, hash, user_id,
                         check_owner);
}

IdemHttpResponse answer_without_work(ClaimDecision d, const std::optional<IdemState>& previous) {
    switch (d) {
        case ClaimDecision::replay:
            if (previous && previous->status == "done") return {previous->code, previous->body, "replay"};
            return {500, error_body("stored answer missing"), "unreadable"};
        case ClaimDecision::in_progress: return {409, error_body("in progress, retry later"), "in_progress"};
        case ClaimDecision::mismatch:
            return {422, error_body("Idempotency-Key already used for another request"), "mismatch"};
        case ClaimDecision::other_user: return {409, error_body("Idempotency-Key belongs to another caller"), "other_user"};
        case ClaimDecision::unreadable: return {500, error_body("stored state in an unknown format"), "unreadable"};
        case ClaimDecision::vanished:
            return {500, error_body("Cache::add() said the key exists, Cache::get() found nothing"), "vanished"};
        case ClaimDecision::first: break;
    }
    throw std::logic_error("answer_without_work: the first request has no answer without work");
}

std::string to_string(ClaimDecision d) {
    switch (d) {
        case ClaimDecision::first: return "first";
        case ClaimDecision::replay: return "replay";
        case ClaimDecision::in_progress: return "in_progress";
        case ClaimDecision::mismatch: return "mismatch";
        case ClaimDecision::other_user: return "other_user";
        case ClaimDecision::unreadable: return "unreadable";
        case ClaimDecision::vanished: return "vanished";
    }
    return "?";
}

bool is_lab_result(const KvError& e, StoreOutages outages) {
    switch (e.kind()) {
        case KvError::Kind::reply: return true;
        case KvError::Kind::unavailable: return outages == StoreOutages::scheduled;
        case KvError::Kind::unexpected: return false;
    }
    return false;
}

IdemMiddleware::IdemMiddleware(Kv& kv, Clock& clock, History& history, std::string actor, IdemMiddlewareSpec spec,
                               StoreOutages outages)
    : m_kv(kv), m_clock(clock), m_history(history), m_actor(std::move(actor)), m_spec(std::move(spec)),
      m_outages(outages) {}

void IdemMiddleware::record(Op op, nlohmann::json data) {
    m_history.record(HistoryRecord{0, m_clock.now().count(), m_actor, op, std::move(data)});
}

void IdemMiddleware::store_error(Op op, const std::string& key, const KvError& e, nlohmann::json data) {
    if (!is_lab_result(e, m_outages)) {
        const char* what_to_check =
            e.kind() == KvError::Kind::unavailable
                ? "check that redis-server is running and reachable; a lab that stops its server must schedule "
                  "that fault (crash_restart, failover, pause_replica)"
                : "a reply relab cannot read: a bug in relab or a server it does not support";
        throw HarnessError(fmt::format("client {}: the idempotency store failed at the middleware's {} of {}, and no "
                                       "fault of the lab explains it: {} ({})",
                                       m_actor, to_string(op), key, e.what(), what_to_check));
    }
    data["key"] = key;
    data["error"] = e.what();
    data["error_class"] = to_string(e.kind());
    record(op, std::move(data));
}

IdemHttpResponse IdemMiddleware::handle(const IdemHttpRequest& req, const std::string& key_format,
                                        const BusinessLogic& business) {
    const std::string hash = payload_hash(req.body);
    const std::string key = idem_key_for(key_format, req.user_id, req.client_key, hash);
    const std::optional<int64_t> owner = m_spec.check_owner ? std::optional<int64_t>(req.user_id) : std::nullopt;

    Claim claimed;
    try {
        claimed = claim_key(key, state_json({"in_progress", hash, 0, "", owner}));
    } catch (const KvError& e) {
        // Fail closed: without the claim nobody knows whether this is the first request.
        store_error(Op::claim, key, e, {{"ttl_ms", m_spec.claim_ttl_ms}});
        return {503, error_body("idempotency store unavailable"), "unavailable"};
    }
    // Parsed once: the decision and the answer without work both read it.
    const std::optional<IdemState> previous = claimed.previous ? parse_state(*claimed.previous) : std::nullopt;
    const ClaimDecision decision =
        claimed.vanished ? ClaimDecision::vanished
                         : decide_parsed(claimed.previous.has_value(), previous, hash, req.user_id, m_spec.check_owner);
    record(Op::claim, {{"key", key},
                     {"previous", claimed.previous ? nlohmann::json(*claimed.previous) : nlohmann::json(nullptr)},
                     {"decision", to_string(decision)},
                     {"via", std::string(name_in(k_idem_claims, m_spec.claim))},
                     {"ttl_ms", m_spec.claim_ttl_ms}});
    if (decision != ClaimDecision::first) return answer_without_work(decision, previous);

    if (m_spec.wait && wait(key, "claim") < m_spec.wait->replicas && m_spec.wait->fail_closed) {
        release(key, "claim not replicated");
        return {503, error_body("claim not replicated, retry later"), "not_replicated"};
    }
    if (m_spec.accept_async) {
        // Section 4.4's remedy: the answer is stored before the work starts, so a retry replays it
        // whatever the job's length; the job then runs once, as the queue's worker would.
        const IdemHttpResponse accepted{202, ordered_json{{"status", "accepted"}}.dump(), "accepted"};
        if (!store_answer(key, {"done", hash, accepted.code, accepted.body, owner}))
            return {500, error_body("internal error"), "store_failed"};
        (void)run_business(key, req, business);
        return accepted;
    }
    const Work work = run_business(key, req, business);
    if (!work.done) return work.answer;  // the key was released, or kept by the lab's choice
    const IdemHttpResponse& response = work.answer;
    if (!store_answer(key, {"done", hash, response.code, response.body, owner}))
        return {500, error_body("internal error"), "store_failed"};
    if (m_spec.wait) wait(key, "store");
    return response;
}

IdemMiddleware::Work IdemMiddleware::run_business(const std::string& key, const IdemHttpRequest& req,
                                                  const BusinessLogic& business) {
    try {
        return {business(), true};
    } catch (const DuplicateOrderError&) {
        release(key, "layer 4 refused a duplicate");
        return {{409, error_body("duplicate request: the order exists already"), "layer4"}, false};
    } catch (const BusinessLogicFailure& e) {
        // The article's release: DEL the key so the client's retry is first again. Without it the
        // key stays in_progress until phase 1's TTL and every retry gets 409.
        if (m_spec.release_on_error) release(key, e.what());
        return {{500, error_body("internal error"), "error"}, false};
    } catch (const HarnessError&) {
        throw;
    } catch (const std::exception& e) {
        // No lab schedules a failure of the orders table: the trial cannot be judged.
        throw HarnessError(fmt::format("client {}: the business logic (INSERT INTO orders) of user {}'s request {} "
                                       "failed, and no fault of the lab explains it: {} (check that PostgreSQL is "
                                       "running and reachable)",
                                       m_actor, req.user_id, req.client_key, e.what()));
    }
}

void IdemMiddleware::release(const std::string& key, const std::string& reason) {
    try {
        const int64_t deleted = m_kv.del(key);
        record(Op::release, {{"key", key}, {"deleted", deleted}, {"reason", reason}});
    } catch (const KvError& e) {
        store_error(Op::release, key, e, {{"reason", reason}});
    }
}

int64_t IdemMiddleware::wait(const std::string& key, const char* after) {
    try {
        const IdemWait& w = *m_spec.wait;
        const int64_t acked = m_kv.wait_replicas(w.replicas, Millis{w.timeout_ms});
        record(Op::wait, {{"after", after}, {"acked", acked}, {"wanted", w.replicas}, {"timeout_ms", w.timeout_ms}});
        return acked;
    } catch (const KvError& e) {
        store_error(Op::wait, key, e, {{"after", after}});
        return -1;
    }
}

IdemMiddleware::Claim IdemMiddleware::claim_key(const std::string& key, const std::string& value) {
    KvSetOptions claim;
    claim.condition = KvSetOptions::Condition::nx;
    claim.ttl = Millis{m_spec.claim_ttl_ms};
    if (m_spec.claim == IdemClaim::set_nx_get) {
        claim.get = true;
        return {m_kv.set(key, value, claim).previous, false};
    }
    // Cache::add(): atomic, but true or false only (relab sends SET NX EX, as its Lua script does
    // EXISTS then SETEX); the old value takes a second call, Cache::get().
    if (m_kv.set(key, value, claim).written) return {};
    if (m_spec.add_get_gap_ms > 0) m_clock.sleep_for(Millis{m_spec.add_get_gap_ms});
    std::optional<std::string> old = m_kv.get(key);
    const bool vanished = !old;
    return {std::move(old), vanished};
}

bool IdemMiddleware::store_answer(const std::string& key, const IdemState& done) {
    KvSetOptions store;
    store.condition = KvSetOptions::Condition::xx;
    store.keepttl = m_spec.done_keepttl;
    if (!store.keepttl) store.ttl = Millis{m_spec.done_ttl_ms};
    try {
        const KvSetResult stored = m_kv.set(key, state_json(done), store);
        nlohmann::json data = {{"key", key}, {"written", stored.written}, {"code", done.code}};
        if (store.keepttl)
            data["keepttl"] = true;
        else
            data["ttl_ms"] = m_spec.done_ttl_ms;
        record(Op::store, std::move(data));
        return true;
    } catch (const KvError& e) {
        store_error(Op::store, key, e, nlohmann::json::object());
        return false;
    }
}

}  // namespace relab
