#include "describe/describe.h"

#include <algorithm>
#include <regex>

namespace relab::desc {

std::string unit_words(Unit u) {
    switch (u) {
        case Unit::none: return "";
        case Unit::ms: return "milliseconds";
        case Unit::us: return "microseconds";
        case Unit::bytes: return "bytes";
        case Unit::per_s: return "per second";
        case Unit::percent: return "percent";
    }
    return "";
}

bool contains_match(const std::string& text, std::string_view pattern) {
    return std::regex_search(text, std::regex(pattern.begin(), pattern.end(), std::regex::ECMAScript));
}

namespace {

constexpr size_t k_width = 120;

std::string scalar(const nlohmann::ordered_json& v) { return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::strict); }

bool all_scalars(const nlohmann::ordered_json& v) {
    return std::all_of(v.begin(), v.end(), [](const nlohmann::ordered_json& x) { return !x.is_structured(); });
}

void pretty(const nlohmann::ordered_json& v, size_t indent, size_t column, std::string& out) {
    const std::string pad(indent + 2, ' ');
    if (v.is_array()) {
        if (v.empty()) return void(out += "[]");
        if (all_scalars(v)) {
            std::string line = "[";
            for (size_t i = 0; i < v.size(); ++i) line += (i ? ", " : "") + scalar(v[i]);
            line += "]";
            if (column + line.size() <= k_width) return void(out += line);
        }
        out += "[\n";
        for (size_t i = 0; i < v.size(); ++i) {
            out += pad;
            pretty(v[i], indent + 2, pad.size(), out);
            out += i + 1 < v.size() ? ",\n" : "\n";
        }
        out += std::string(indent, ' ') + "]";
    } else if (v.is_object()) {
        if (v.empty()) return void(out += "{}");
        out += "{\n";
        size_t i = 0;
        for (const auto& [key, value] : v.items()) {
            const std::string head = pad + scalar(key) + ": ";
            out += head;
            pretty(value, indent + 2, head.size(), out);
            out += ++i < v.size() ? ",\n" : "\n";
        }
        out += std::string(indent, ' ') + "}";
    } else {
        out += scalar(v);
    }
}

}  // namespace

std::string pretty_json(const nlohmann::ordered_json& v) {
    std::string out;
    pretty(v, 0, 0, out);
    return out;
}

}  // namespace relab::desc
