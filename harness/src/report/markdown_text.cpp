#include "report/markdown_text.h"

#include <cctype>
#include <cstdint>
#include <regex>

namespace relab {

std::string md_escape(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '|': out += "\\|"; break;
            case '\\': out += "\\\\"; break;
            case '`': out += "\\`"; break;
            case '*': out += "\\*"; break;
            case '_': out += "\\_"; break;
            case '[': out += "\\["; break;
            case ']': out += "\\]"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '\n':
            case '\r': out += ' '; break;
            default: out += c;
        }
    }
    return out;
}

std::string md_code(const std::string& text) {
    std::string fence = "`";
    while (text.find(fence) != std::string::npos) fence += '`';
    const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
    std::string body;
    for (const char c : text) body += (c == '\n' || c == '\r') ? ' ' : c;
    // A `|` ends a table cell even inside a code span unless escaped.
    std::string cell;
    for (const char c : body) cell += c == '|' ? std::string("\\|") : std::string(1, c);
    return fence + (pad ? " " : "") + cell + (pad ? " " : "") + fence;
}

namespace md_text {

// One UTF-8 code point from s at i (advancing i); a sequence cut short counts as its first byte.
uint32_t next_code_point(const std::string& s, size_t& i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (extra == 0 || i + extra >= s.size()) {
        ++i;
        return c;
    }
    uint32_t cp = c & (0x3Fu >> extra);
    for (size_t k = 1; k <= extra; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    i += 1 + extra;
    return cp;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// Lower case for ASCII and the Latin letters Vietnamese uses (Latin-1, Latin Extended-A and B,
// Latin Extended Additional), the scripts these docs are written in.
uint32_t lower(uint32_t cp) {
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
    if (cp >= 0x100 && cp <= 0x17F && cp != 0x130 && cp != 0x131 && cp % 2 == 0) return cp + 1;
    if (cp == 0x1A0 || cp == 0x1AF) return cp + 1;
    if (cp >= 0x1EA0 && cp <= 0x1EF9 && cp % 2 == 0) return cp + 1;
    return cp;
}

// What GitHub drops from an anchor: ASCII punctuation but '-' and '_', and the punctuation and
// symbol blocks (Latin-1's signs, general punctuation, arrows, maths, box drawing, emoji).
bool dropped(uint32_t cp) {
    if (cp < 0x80) return !(std::isalnum(static_cast<int>(cp)) || cp == '-' || cp == '_' || cp == ' ');
    if (cp >= 0xA0 && cp <= 0xBF) return cp != 0xAA && cp != 0xB5 && cp != 0xBA;
    if (cp == 0xD7 || cp == 0xF7) return true;
    if (cp >= 0x2000 && cp <= 0x2BFF) return true;
    return cp >= 0x1F000;
}

}  // namespace md_text


std::string github_slug(const std::string& heading) {
    // The heading as rendered text: [text](target) → text, tags and inline-code/emphasis marks gone.
    std::string text = std::regex_replace(heading, std::regex(R"(!?\[([^\]]*)\]\([^)]*\))"), "$1");
    text = std::regex_replace(text, std::regex(R"(<[^>]*>)"), "");
    std::string out;
    for (size_t i = 0; i < text.size();) {
        const uint32_t cp = md_text::next_code_point(text, i);
        if (cp == '`' || cp == '*' || md_text::dropped(cp)) continue;
        if (cp == ' ')
            out += '-';
        else
            md_text::append_utf8(out, md_text::lower(cp));
    }
    return out;
}

// github-slugger's rule: a slug seen before gets the next free -N of its base.
std::string Slugger::add(const std::string& heading) {
    const std::string base = github_slug(heading);
    std::string slug = base;
    while (m_seen.count(slug)) slug = base + "-" + std::to_string(++m_seen[base]);
    m_seen.emplace(slug, 0);
    return slug;
}

}  // namespace relab
