// What RealControl reads out of Redis replies, apart from the servers so it can be tested alone:
// a reply as Control::commands gives it, a field of XINFO GROUPS, and CLIENT LIST's named
// connections (those a fault drops or the stop unblocks).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clients/redis_client.h"

namespace relab {

// A reply as Control::commands gives it: data, an error reply included (ports/control.h).
nlohmann::json reply_data(const RedisReply& r);

// XINFO GROUPS reply entry (a flat field/value array) -> value of one field; null when absent.
const RedisReply* field_of(const RedisReply& flat, const std::string& name);

// A connection in CLIENT LIST's text that has a name: its ID and that name (empty when unnamed).
struct NamedClient {
    std::string id;
    std::string name;
};
// Every line of CLIENT LIST that starts with its id= and has a name= field, in order.
std::vector<NamedClient> named_clients(const std::string& client_list);

}  // namespace relab
