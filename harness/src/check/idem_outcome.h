// What an idempotency-key lab (article 002) measured, as plain structs: counts taken from the
// orders table and from the answers the clients got, and server figures shown beside the
// article's. Part of TrialOutcome and LabResult (outcome.h).
#pragma once

#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab {

// A figure this machine measured beside the one the article documented, and why they differ.
struct Measurement {
    std::string label;
    std::string measured;
    std::string documented;  // empty: the article gives none
    std::string reason;      // why this machine's figure differs, or how it was taken
    std::string reason_vi{};
    std::string label_vi{};  // empty: as label
};

struct IdemCounts {
    int sends = 0;       // requests sent: first sends, resends and retries
    int orders = 0;      // rows in the orders table
    int duplicates = 0;  // rows beyond the first per idem_key (the same user's same Idempotency-Key)
    int created = 0;     // 201 answers from the business logic
    int replays = 0;     // stored answers replayed
    int conflicts = 0;   // 409: the key is in progress (or refused by layer 4 or the owner check)
    int mismatches = 0;  // 422: the key was used for another payload
    int layer4 = 0;      // inserts refused by the unique index on orders(idem_key)
    int errors = 0;      // 5xx answers
    int leaks = 0;       // answers naming an order that belongs to another user
    int unanswered = 0;  // sends without an answer (the client process was killed)
    int vanished = 0;    // Cache::add() said the key exists, Cache::get() then found none (a 500)
    void add(const IdemCounts& o);
    // A trial is wrong when it made a duplicate order, served another user's answer, or could not
    // tell a request's state because the key vanished between the claim's two calls.
    bool wrong() const { return duplicates > 0 || leaks > 0 || vanished > 0; }
};

struct IdemTrial {
    IdemCounts counts;
    std::vector<PlacedOrder> orders;
    std::vector<std::string> leak_examples;  // "user 9 was served order 1 of user 7"
};

}  // namespace relab
