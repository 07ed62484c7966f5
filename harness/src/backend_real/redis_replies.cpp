#include "backend_real/redis_replies.h"

#include <sstream>

namespace relab {

nlohmann::json reply_data(const RedisReply& r) {
    switch (r.type) {
        case RedisReply::Type::nil: return nullptr;
        case RedisReply::Type::status:
        case RedisReply::Type::string: return r.str;
        case RedisReply::Type::error: return {{"error", r.str}};
        case RedisReply::Type::integer: return r.integer;
        case RedisReply::Type::array: {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& e : r.elements) out.push_back(reply_data(e));
            return out;
        }
    }
    return nullptr;
}

const RedisReply* field_of(const RedisReply& flat, const std::string& name) {
    for (size_t i = 0; i + 1 < flat.elements.size(); i += 2)
        if (flat.elements[i].str == name) return &flat.elements[i + 1];
    return nullptr;
}

// A name holds no blank (CLIENT SETNAME refuses one), so it ends at the next field.
std::vector<NamedClient> named_clients(const std::string& client_list) {
    std::vector<NamedClient> out;
    std::istringstream lines(client_list);
    for (std::string line; std::getline(lines, line);) {
        const auto name_at = line.find(" name=");
        if (line.rfind("id=", 0) != 0 || name_at == std::string::npos) continue;
        out.push_back({line.substr(3, line.find(' ') - 3),
                       line.substr(name_at + 6, line.find(' ', name_at + 6) - name_at - 6)});
    }
    return out;
}

}  // namespace relab
