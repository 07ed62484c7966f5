// How deep a JSON value nests and how many values it holds, measured without recursion. The JSON
// library parses any depth (its parser keeps a stack of its own), but copying, comparing and
// dumping a value recurse once per level: a file of 50,000 '[' overflows the stack there. The
// readers of files (scenarios, run reports) refuse such a value first, by these.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace relab {

// The JSON Pointer of the first array or object in `root` nested deeper than `max_depth` levels
// (`root` itself, when an array or object, is level 1), or nullopt when none is.
inline std::optional<std::string> json_nested_too_deep(const nlohmann::json& root, size_t max_depth) {
    if (!root.is_structured()) return std::nullopt;
    if (max_depth == 0) return std::string();
    // Each frame's iterator is the child being walked (or end): together they spell the path.
    struct Frame {
        const nlohmann::json* node;
        nlohmann::json::const_iterator it;
    };
    std::vector<Frame> stack;
    stack.push_back({&root, root.cbegin()});
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.it == f.node->cend()) {
            stack.pop_back();
            if (!stack.empty()) ++stack.back().it;
            continue;
        }
        const nlohmann::json& child = *f.it;
        if (!child.is_structured()) {
            ++f.it;
            continue;
        }
        if (stack.size() + 1 > max_depth) {
            std::string pointer;
            for (const auto& frame : stack) {
                if (!frame.node->is_object()) {
                    pointer += "/" + std::to_string(frame.it - frame.node->cbegin());
                    continue;
                }
                pointer += '/';
                for (char c : frame.it.key()) {  // RFC 6901 escaping
                    if (c == '~')
                        pointer += "~0";
                    else if (c == '/')
                        pointer += "~1";
                    else
                        pointer += c;
                }
            }
            return pointer;
        }
        stack.push_back({&child, child.cbegin()});
    }
    return std::nullopt;
}

// How many values `root` holds, itself and every element and member value at any depth; the count
// stops once it passes `limit`.
inline size_t json_value_count(const nlohmann::json& root, size_t limit) {
    size_t n = 0;
    std::vector<const nlohmann::json*> todo{&root};
    while (!todo.empty() && n <= limit) {
        const nlohmann::json* v = todo.back();
        todo.pop_back();
        ++n;
        if (v->is_structured())
            for (const auto& child : *v) todo.push_back(&child);
    }
    return n;
}

}  // namespace relab
