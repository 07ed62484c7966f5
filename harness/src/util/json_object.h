// A JSON object from key/value pairs, each value moved into place: json_object("entry", id,
// "event", event_json(ev)). nlohmann's brace form ({{"entry", id}, {"event", ...}}) builds every
// value twice (its initializer_list is const, so a nested object is deep-copied out of it); the
// history records of the simulator's hot path are built this way instead.
#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace relab {

namespace detail {

inline void json_object_put(nlohmann::json::object_t&) {}

template <class V, class... Rest>
void json_object_put(nlohmann::json::object_t& o, const char* key, V&& value, Rest&&... rest) {
    o.emplace(key, nlohmann::json(std::forward<V>(value)));
    json_object_put(o, std::forward<Rest>(rest)...);
}

}  // namespace detail

template <class... KeyValues>
nlohmann::json json_object(KeyValues&&... kv) {
    static_assert(sizeof...(KeyValues) % 2 == 0, "json_object takes key, value pairs");
    nlohmann::json::object_t o;
    detail::json_object_put(o, std::forward<KeyValues>(kv)...);
    return nlohmann::json(std::move(o));
}

}  // namespace relab
