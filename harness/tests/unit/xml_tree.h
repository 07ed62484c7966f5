// A strict little XML parser for the reporters' tests: it accepts only well-formed XML (one root
// element, every tag closed in order, quoted and unique attributes, no raw '<' or '&' in text or
// attribute values, only the predefined entities and character references) and returns the tree,
// so a test can both check that junit.xml or an SVG parses and count what is in it.
#pragma once

#include <cctype>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace relab::test {

struct XmlElement {
    std::string name;
    std::map<std::string, std::string> attrs;
    std::vector<XmlElement> children;
    std::string text;  // character data directly inside, entities decoded

    // Children named `name`, at any depth below this element.
    void find_all(const std::string& tag, std::vector<const XmlElement*>& out) const {
        for (const auto& c : children) {
            if (c.name == tag) out.push_back(&c);
            c.find_all(tag, out);
        }
    }
    std::vector<const XmlElement*> all(const std::string& tag) const {
        std::vector<const XmlElement*> out;
        find_all(tag, out);
        return out;
    }
    std::string attr(const std::string& key) const {
        const auto it = attrs.find(key);
        if (it == attrs.end()) throw std::runtime_error("<" + name + "> has no attribute " + key);
        return it->second;
    }
};

class XmlParser {
public:
    explicit XmlParser(const std::string& text) : m_s(text) {}

    XmlElement parse_document() {
        skip_space();
        if (starts("<?xml")) {
            const size_t end = m_s.find("?>", m_pos);
            if (end == std::string::npos) fail("unterminated XML declaration");
            m_pos = end + 2;
        }
        skip_misc();
        if (!starts("<")) fail("expected the root element");
        XmlElement root = parse_element();
        skip_misc();
        if (m_pos != m_s.size()) fail("content after the root element");
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw std::runtime_error("XML not well-formed at byte " + std::to_string(m_pos) + ": " + why);
    }
    bool starts(const char* p) const { return m_s.compare(m_pos, std::char_traits<char>::length(p), p) == 0; }
    void skip_space() {
        while (m_pos < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_pos]))) ++m_pos;
    }
    void skip_misc() {
        for (;;) {
            skip_space();
            if (!starts("<!--")) return;
            const size_t end = m_s.find("-->", m_pos);
            if (end == std::string::npos) fail("unterminated comment");
            m_pos = end + 3;
        }
    }
    static bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
    static bool name_char(char c) {
        return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    }
    std::string parse_name() {
        if (m_pos >= m_s.size() || !name_start(m_s[m_pos])) fail("expected a name");
        const size_t start = m_pos;
        while (m_pos < m_s.size() && name_char(m_s[m_pos])) ++m_pos;
        return m_s.substr(start, m_pos - start);
    }
    static void append_utf8(std::string& out, uint32_t cp) {
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
    // Character data up to `stop`, entities decoded; raw '<' (in attributes) and '&' are errors.
    std::string parse_chars(char stop) {
        std::string out;
        while (m_pos < m_s.size() && m_s[m_pos] != stop) {
            const char c = m_s[m_pos];
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') fail("control character");
            if (c == '<') fail("raw '<'");
            if (c == '&') {
                const size_t semi = m_s.find(';', m_pos);
                if (semi == std::string::npos || semi - m_pos > 10) fail("raw '&'");
                const std::string ent = m_s.substr(m_pos + 1, semi - m_pos - 1);
                static const std::map<std::string, std::string> named = {
                    {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
                if (named.count(ent)) {
                    out += named.at(ent);
                } else if (ent.size() > 1 && ent[0] == '#') {
                    const bool hex = ent[1] == 'x';
                    const std::string digits = ent.substr(hex ? 2 : 1);
                    if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") !=
                                              std::string::npos)
                        fail("bad character reference &" + ent + ";");
                    const uint32_t cp = static_cast<uint32_t>(std::stoul(digits, nullptr, hex ? 16 : 10));
                    if (cp < 0x20 && cp != 9 && cp != 10 && cp != 13) fail("reference to a control character");
                    append_utf8(out, cp);
                } else {
                    fail("unknown entity &" + ent + ";");
                }
                m_pos = semi + 1;
                continue;
            }
            out += c;
            ++m_pos;
        }
        return out;
    }
    XmlElement parse_element() {
        ++m_pos;  // '<'
        XmlElement e;
        e.name = parse_name();
        for (;;) {
            const size_t before = m_pos;
            skip_space();
            if (starts("/>")) {
                m_pos += 2;
                return e;
            }
            if (starts(">")) {
                ++m_pos;
                break;
            }
            if (m_pos == before) fail("expected whitespace before an attribute");
            const std::string key = parse_name();
            skip_space();
            if (!starts("=")) fail("expected '=' after attribute " + key);
            ++m_pos;
            skip_space();
            if (m_pos >= m_s.size() || (m_s[m_pos] != '"' && m_s[m_pos] != '\'')) fail("unquoted attribute " + key);
            const char quote = m_s[m_pos++];
            std::string value = parse_chars(quote);
            if (m_pos >= m_s.size()) fail("unterminated attribute " + key);
            ++m_pos;
            if (!e.attrs.emplace(key, std::move(value)).second) fail("duplicate attribute " + key);
        }
        for (;;) {
            if (m_pos >= m_s.size()) fail("<" + e.name + "> is never closed");
            if (starts("</")) {
                m_pos += 2;
                const std::string closing = parse_name();
                if (closing != e.name) fail("</" + closing + "> closes <" + e.name + ">");
                skip_space();
                if (!starts(">")) fail("expected '>'");
                ++m_pos;
                return e;
            }
            if (starts("<!--")) {
                skip_misc();
                continue;
            }
            if (starts("<![CDATA[")) {
                const size_t end = m_s.find("]]>", m_pos);
                if (end == std::string::npos) fail("unterminated CDATA");
                e.text += m_s.substr(m_pos + 9, end - m_pos - 9);
                m_pos = end + 3;
                continue;
            }
            if (starts("<")) {
                e.children.push_back(parse_element());
                continue;
            }
            e.text += parse_chars('<');
        }
    }

    const std::string& m_s;
    size_t m_pos = 0;
};

inline XmlElement parse_xml(const std::string& text) { return XmlParser(text).parse_document(); }

}  // namespace relab::test
