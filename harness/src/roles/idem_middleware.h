// The idempotency middleware of article 002 (section 1.2), over the Kv port:
//   claim   SET k {in_progress,hash} NX GET EX 60
//   old value: hash differs -> 422; in progress -> 409; done -> replay the stored answer
//   first:  run the business logic; when it fails the way the lab scheduled (layer 4, an injected
//           failure) DEL k (the client may retry); else SET k {done,hash,code,body} XX EX 86400
//           (or KEEPTTL: one-tier TTL)
// A failure the lab did not schedule is a HarnessError, never an answer (is_lab_result).
// The decisions are pure functions, tested without a server; IdemMiddleware strings them together.
#pragma once

#include "util/enum_names.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ports/ports.h"
#include "scenario/idem/idem_spec.h"

namespace relab {

struct IdemHttpRequest {
    int64_t user_id = 0;
    std::string client_key;  // the Idempotency-Key header
    std::string body;
};

struct IdemHttpResponse {
    int code = 0;
    std::string body;
    // What produced it: "created" (business logic), "replay", "in_progress", "mismatch",
    // "other_user", "layer4", "unreadable", "error", "store_failed", "unavailable", "not_replicated".
    std::string source;
};

// The value stored under an idempotency key.
struct IdemState {
    std::string status;  // "in_progress" | "done"
    std::string hash;
    int code = 0;        // done only
    std::string body;    // done only
    std::optional<int64_t> user_id;  // with the owner check (Case 2's second fix)
};

// xxh128 in the article; any stable hash serves: 16 hex digits of 64-bit FNV-1a.
std::string payload_hash(const std::string& body);
// The format with {user_id}, {client_key} and {hash} replaced.
std::string idem_key_for(const std::string& format, int64_t user_id, const std::string& client_key,
                         const std::string& hash);
std::string state_json(const IdemState& s);
// nullopt when the value is not a state this middleware wrote (another format version, garbage).
std::optional<IdemState> parse_state(const std::string& value);

enum class ClaimDecision {
    first,        // the claim took the key: run the business logic
    replay,       // done: answer with the stored response
    in_progress,  // 409
    mismatch,     // 422: the key was used for another payload
    other_user,   // 409: the stored state belongs to another user (owner check)
    unreadable,   // 500: the stored value is not this format
    vanished,     // 500: add() found the key, get() did not: it expired between the two (section 1.3)
};

// From SET ... NX GET's reply (nullopt: there was no old value).
ClaimDecision decide_claim(const std::optional<std::string>& previous, const std::string& hash, int64_t user_id,
                           bool check_owner);
// The answer to a request that did not win the claim.
IdemHttpResponse answer_without_work(ClaimDecision d, const std::optional<IdemState>& previous);
std::string to_string(ClaimDecision d);

// The business logic failed for a reason of its own that the lab scheduled (a request's
// fail_attempts): a lab result, answered 500 with the key released.
class BusinessLogicFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The business logic behind the middleware: returns the answer, or throws. A DuplicateOrderError
// (layer 4) is answered 409 and a BusinessLogicFailure 500, the key released either way; any other
// exception (a PostgreSQL error: no lab schedules one) is a harness failure and becomes a
// HarnessError.
using BusinessLogic = std::function<IdemHttpResponse()>;

// Whether the lab schedules a fault that takes the store's server away or cuts it off
// (redis_faults_scheduled: a restart, a failover, a paused replica). Only then can a lost
// connection or a timeout be the lab's result.
enum class StoreOutages { none_scheduled, scheduled };
inline constexpr EnumName<StoreOutages> k_store_outages[] = {{StoreOutages::none_scheduled, "none_scheduled"},
                                                             {StoreOutages::scheduled, "scheduled"}};
constexpr const auto& enum_names(StoreOutages) { return k_store_outages; }

// Whether a failed store call is the lab's result (answered, recorded) or a harness failure: an
// error reply is the server's own answer; no answer is a result only while a server fault is
// scheduled; a reply relab cannot read never is.
bool is_lab_result(const KvError& e, StoreOutages outages);

class IdemMiddleware {
public:
    IdemMiddleware(Kv& kv, Clock& clock, History& history, std::string actor, IdemMiddlewareSpec spec,
                   StoreOutages outages);

    // One request through the middleware. `key_format` overrides the spec's (a deploy). A store
    // error that is a lab result (is_lab_result) is answered 503 (claim) or 500 (store) and
    // recorded with its "error_class"; any other failure throws HarnessError naming it.
    IdemHttpResponse handle(const IdemHttpRequest& req, const std::string& key_format, const BusinessLogic& business);

private:
    // Phase 1: the claim's old value (nullopt: the claim took the key), or nullopt with `vanished`
    // set when Cache::add() said the key exists and Cache::get() then found none.
    struct Claim {
        std::optional<std::string> previous;
        bool vanished = false;
    };
    Claim claim_key(const std::string& key, const std::string& value);
    // Phase 2: SET ... XX with the answer; false when the store failed (answered 500).
    bool store_answer(const std::string& key, const IdemState& done);
    // The business logic's answer (done: it ran to its end and its answer is to be stored); a
    // failure the lab scheduled releases the key (layer 4, an injected error); any other is a
    // HarnessError.
    struct Work {
        IdemHttpResponse answer;
        bool done = false;
    };
    Work run_business(const std::string& key, const IdemHttpRequest& req, const BusinessLogic& business);
    void release(const std::string& key, const std::string& reason);
    // WAIT after `after` ("claim", "store"): the replicas that acknowledged, -1 when it failed.
    int64_t wait(const std::string& key, const char* after);
    void record(Op op, nlohmann::json data);
    // Records a failed store call, or throws HarnessError when it is not a lab result.
    void store_error(Op op, const std::string& key, const KvError& e, nlohmann::json data);

    Kv& m_kv;
    Clock& m_clock;
    History& m_history;
    std::string m_actor;
    IdemMiddlewareSpec m_spec;
    StoreOutages m_outages;
};

}  // namespace relab
