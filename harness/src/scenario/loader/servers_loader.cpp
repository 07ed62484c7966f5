#include "scenario/loader/servers_loader.h"

namespace relab::scenario_json {

namespace {

bool servers_flag(const Object& o, const std::string& key) {
    if (!o.has(key)) return false;
    const json& v = o.at(key);
    if (!v.is_boolean()) o.reader().expected(o.path(key), "true or false", v);
    return v.get<bool>();
}

// The settings object at `key`, name: value, each value a string.
std::map<std::string, std::string> server_settings(const Object& o, const std::string& key, const std::string& what) {
    const Reader& r = o.reader();
    const json& cfg = o.at(key);
    if (!cfg.is_object()) r.expected(o.path(key), "an object of " + what + " (name: value)", cfg);
    std::map<std::string, std::string> out;
    for (const auto& [name, value] : cfg.items()) out[name] = r.string(value, child(o.path(key), name), false);
    return out;
}

}  // namespace

LabServers read_servers(const Object& o) {
    LabServers s;
    s.own = true;
    if (o.has("redis")) s.redis_config = server_settings(o, "redis", "redis-server settings");
    s.replica = servers_flag(o, "replica");
    if (o.has("cache")) {
        s.cache = true;
        s.cache_config = server_settings(o, "cache", "the cache redis-server's settings");
    }
    if (o.has("postgres")) {
        s.postgres = true;
        s.postgres_config = server_settings(o, "postgres", "PostgreSQL settings");
    }
    return s;
}

}  // namespace relab::scenario_json
