// A server endpoint as JSON, password included: what a role's config file (process/role_process.cpp,
// whose passwords are then moved to the environment) and a reaper message (process/reaper.cpp) carry.
#pragma once

#include <nlohmann/json.hpp>

#include "clients/endpoint.h"

namespace relab {

inline nlohmann::json redis_endpoint_json(const RedisEndpoint& ep) {
    return {{"host", ep.host}, {"port", ep.port}, {"password", ep.password}, {"db", ep.db}};
}

inline RedisEndpoint redis_endpoint_from_json(const nlohmann::json& j) {
    RedisEndpoint ep;
    ep.host = j.at("host");
    ep.port = j.at("port");
    ep.password = j.at("password");
    ep.db = j.at("db");
    return ep;
}

inline nlohmann::json pg_endpoint_json(const PgEndpoint& ep) {
    return {{"host", ep.host}, {"port", ep.port}, {"user", ep.user}, {"password", ep.password}, {"dbname", ep.dbname}};
}

inline PgEndpoint pg_endpoint_from_json(const nlohmann::json& j) {
    PgEndpoint ep;
    ep.host = j.at("host");
    ep.port = j.at("port");
    ep.user = j.at("user");
    ep.password = j.at("password");
    ep.dbname = j.at("dbname");
    return ep;
}

}  // namespace relab
