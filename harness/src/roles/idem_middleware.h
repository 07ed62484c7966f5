// The idempotency middleware of article 002 (section 1.2), over the Kv port:
//   claim   SET k {in_progress,hash} NX GET EX 60
//   old value: hash differs -> 422; in progress -> 409; done -> replay the stored answer
//   first:  run the business logic; on an exception DEL k (the client may retry);
//           else SET k {done,hash,code,body} XX EX 86400 (or KEEPTTL: one-tier TTL)
// The decisions are pure functions, tested without a server; IdemMiddleware strings them together.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ports/ports.h"
#include "scenario/idem_spec.h"

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
};

// From SET ... NX GET's reply (nullopt: there was no old value).
ClaimDecision decide_claim(const std::optional<std::string>& previous, const std::string& hash, int64_t user_id,
                           bool check_owner);
// The answer to a request that did not win the claim.
IdemHttpResponse answer_without_work(ClaimDecision d, const std::optional<IdemState>& previous);
std::string to_string(ClaimDecision d);

// The business logic behind the middleware: returns the answer, or throws. A DuplicateOrderError
// (layer 4) is answered 409; any other exception 500. Either way the key is released.
using BusinessLogic = std::function<IdemHttpResponse()>;

class IdemMiddleware {
public:
    IdemMiddleware(Kv& kv, Clock& clock, History& history, std::string actor, IdemMiddlewareSpec spec);

    // One request through the middleware. `key_format` overrides the spec's (a deploy). Redis
    // errors are answered 503 (claim) or 500 (store), never thrown; the steps are recorded.
    IdemHttpResponse handle(const IdemHttpRequest& req, const std::string& key_format, const BusinessLogic& business);

private:
    void record(const std::string& op, nlohmann::json data);

    Kv& m_kv;
    Clock& m_clock;
    History& m_history;
    std::string m_actor;
    IdemMiddlewareSpec m_spec;
};

}  // namespace relab
