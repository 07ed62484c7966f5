#include <algorithm>

#include <fmt/format.h>

#include "report/html/html_parts.h"

namespace relab::html {

std::string esc(std::string_view text) { return markup_escape(text); }

std::string num(double v) { return fmt::format("{:.1f}", v); }

size_t code_points(const std::string& s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string anchor(const LabResult& lab) { return "lab-" + esc(lab_key(lab)); }

std::string badge(Verdict v) {
    return fmt::format(R"(<span class="badge {0}">{0}</span>)", verdict_text(v));
}

std::string backend_tag(const LabResult& lab) {
    const std::string b = backend_of(lab);
    return fmt::format(R"(<span class="backend {0}" title="{1}">{0}</span>)", esc(b),
                       b == "sim" ? "deterministic simulator" : "real redis-server and PostgreSQL");
}

}  // namespace relab::html
