#include "report/schema_doc.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/markdown_text.h"

namespace relab {

namespace schema_md {

using nlohmann::ordered_json;

struct Row {
    std::string field, type, default_value, unit, description;
};

struct Section {
    std::string heading;  // Markdown: "`dispatcher`"
    std::string intro;
    std::vector<Row> rows;
    std::vector<std::string> rules;
    bool shared = false;  // a definition's own section, under "Shared definitions"
};

std::string def_name(const ordered_json& ref) {
    const std::string r = ref.get<std::string>();
    const std::string prefix = "#/$defs/";
    if (r.compare(0, prefix.size(), prefix) != 0)
        throw std::runtime_error("scenarios/schema.json: only #/$defs/ references are documented, got " + r);
    return r.substr(prefix.size());
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The unit a property's name gives it (time_ms, size_bytes, ...); min and max take their parent's.
std::string unit_of(const std::string& name, const std::string& parent_unit) {
    static const std::vector<std::pair<std::string, std::string>> suffixes = {
        {"_ms", "ms"}, {"_us", "µs"}, {"_seconds", "s"}, {"_pct", "%"}, {"_per_s", "per second"}, {"_bytes", "bytes"}};
    if (name == "ms") return "ms";
    if (name == "bytes") return "bytes";
    for (const auto& [suffix, unit] : suffixes)
        if (ends_with(name, suffix)) return unit;
    if (name == "min" || name == "max") return parent_unit;
    return "";
}

// An object node's constraint that only says which members go together (anyOf/oneOf of required
// lists): a rule, not an alternative type.
bool constraint_only(const ordered_json& alternatives) {
    for (const auto& alt : alternatives)
        for (const auto& [key, value] : alt.items())
            if (key != "required" && key != "not" && key != "anyOf" && key != "description") return false;
    return true;
}

// "Default: the title." in a description: the default in words, taken out of the text.
std::string take_default_sentence(std::string& description) {
    const std::string mark = "Default: ";
    const size_t at = description.find(mark);
    if (at == std::string::npos) return "";
    size_t end = description.find(". ", at);
    if (end == std::string::npos) end = description.size() - (ends_with(description, ".") ? 1 : 0);
    const std::string value = description.substr(at + mark.size(), end - at - mark.size());
    description.erase(at, std::min(description.size(), end + 2) - at);
    while (!description.empty() && description.back() == ' ') description.pop_back();
    return value;
}

std::string range_text(const ordered_json& n) {
    const bool lo = n.contains("minimum"), hi = n.contains("maximum");
    if (lo && hi) return fmt::format(" {}..{}", n["minimum"].dump(), n["maximum"].dump());
    if (n.contains("exclusiveMinimum") && hi)
        return fmt::format(" > {}, ≤ {}", n["exclusiveMinimum"].dump(), n["maximum"].dump());
    if (lo) return " ≥ " + n["minimum"].dump();
    if (hi) return " ≤ " + n["maximum"].dump();
    return "";
}

std::vector<std::string> type_names(const ordered_json& n) {
    if (!n.contains("type")) return {};
    if (n["type"].is_string()) return {n["type"].get<std::string>()};
    return n["type"].get<std::vector<std::string>>();
}

class SchemaDoc {
public:
    explicit SchemaDoc(const ordered_json& schema) : m_schema(schema) { find_shared(schema, false); }

    std::string render(const std::string& regenerate);
    const std::vector<std::string>& undocumented() const { return m_undocumented; }
    void document();

private:
    const ordered_json& def(const std::string& name) const { return m_schema.at("$defs").at(name); }
    void find_shared(const ordered_json& n, bool conditional);
    std::string link_to_def(const std::string& name) const {
        return fmt::format("[{}](#{})", name, github_slug(md_code(name)));
    }
    std::string link_to_path(const std::string& path) const {
        return fmt::format("[{}](#{})", md_code(path), github_slug(md_code(path)));
    }
    const ordered_json& inline_node(const ordered_json& n) const {
        if (n.contains("$ref") && !n.contains("properties") && !m_shared.count(def_name(n["$ref"])))
            return inline_node(def(def_name(n["$ref"])));
        return n;
    }
    std::string type_text(const ordered_json& n, const std::string& path, const std::string& unit);
    void use(const std::string& name, const std::string& path);
    std::string typed_name(const std::string& t, const ordered_json& n, const std::string& path,
                           const std::string& unit);
    void object_section(const ordered_json& node, const std::string& base, const std::string& heading,
                        const std::string& intro, const std::string& unit);
    Row property_row(const std::string& name, const ordered_json& p, const std::string& path, bool required,
                     const std::vector<std::string>& refined, const std::string& parent_unit);
    std::vector<std::string> refinements(const ordered_json& node, const std::string& name);
    std::vector<std::string> rules(const ordered_json& node, const std::string& path, const std::string& base);
    std::string rule_text(const ordered_json& rule);
    void shared_sections();

    const ordered_json& m_schema;
    std::map<std::string, int> m_refs;
    std::set<std::string> m_shared;
    std::map<std::string, std::vector<std::string>> m_used_at;   // this pass's
    std::map<std::string, std::vector<std::string>> m_all_uses;  // the previous pass's, complete
    std::vector<Section> m_sections;
    std::vector<std::string> m_undocumented;
    std::set<std::string> m_described_paths;  // object sections already made
    std::string m_refining;                   // the property whose rule branches refinements() reads
    bool m_in_shared = false;                 // making a shared definition's sections
    std::string m_shared_name;
};

// A definition gets a section of its own when several places name it, or when a rule's branch
// does (its shape then depends on the rule): elsewhere its members are shown where it is used.
void SchemaDoc::find_shared(const ordered_json& n, bool conditional) {
    if (n.is_array()) {
        for (const auto& v : n) find_shared(v, conditional);
        return;
    }
    if (!n.is_object()) return;
    if (n.contains("$ref") && n["$ref"].is_string()) {
        const std::string name = def_name(n["$ref"]);
        if (++m_refs[name] > 1 || conditional || n.contains("properties")) m_shared.insert(name);
    }
    for (const auto& [key, value] : n.items()) {
        if (key == "$defs") continue;
        const bool branch = key == "allOf" || key == "if" || key == "then" || key == "else";
        find_shared(value, conditional || branch);
    }
    if (&n == &m_schema)
        for (const auto& [name, d] : n.at("$defs").items()) find_shared(d, false);
}

// Records that definition `name` is used at `path`, as Markdown for its "Used at" line; a path
// within another shared definition ("….gap_ms") names that definition.
void SchemaDoc::use(const std::string& name, const std::string& path) {
    const std::string within = "…";
    std::string shown = md_code(path);
    if (path.rfind(within, 0) == 0) {
        const std::string rest = path.substr(within.size());
        shown = link_to_def(m_shared_name) + (rest.empty() ? "" : " " + md_code(rest));
    }
    std::vector<std::string>& uses = m_used_at[name];
    if (std::find(uses.begin(), uses.end(), shown) == uses.end()) uses.push_back(shown);
}

std::string SchemaDoc::typed_name(const std::string& t, const ordered_json& n, const std::string& path,
                                  const std::string& unit) {
    if (t == "integer" || t == "number") return t + range_text(n);
    if (t == "array" && n.contains("prefixItems")) {
        std::vector<std::string> items;
        for (const auto& item : n["prefixItems"]) items.push_back(type_text(item, path + "[]", unit));
        return "[" + join(items, ", ") + "]";
    }
    if (t == "array" && n.contains("items") && n["items"].is_object())
        return "array of " + type_text(n["items"], path + "[]", unit);
    if (t == "object" && n.contains("properties")) {
        // A member object of a definition used in several places: its path starts with "…".
        const std::string heading = path.rfind("…", 0) == 0 ? md_code(path) + " in " + md_code(m_shared_name) : md_code(path);
        object_section(n, path, heading, "", unit);
        if (heading != md_code(path)) return "object, see [" + md_code(path) + "](#" + github_slug(heading) + ")";
        return "object, see " + link_to_path(path);
    }
    if (t == "object" && n.contains("additionalProperties") && n["additionalProperties"].is_object())
        return "object of " + md_code("<name>") + " → " + type_text(n["additionalProperties"], path + ".<name>", unit);
    return t;
}

std::string SchemaDoc::type_text(const ordered_json& n, const std::string& path, const std::string& unit) {
    // A "$ref" beside "properties" adds a definition's rules (opFields); alone it is the type.
    if (n.contains("$ref") && !n.contains("properties") && m_shared.count(def_name(n["$ref"]))) {
        use(def_name(n["$ref"]), path);
        return link_to_def(def_name(n["$ref"]));
    }
    const ordered_json& node = inline_node(n);
    if (node.contains("const")) return md_code(node["const"].dump());
    if (node.contains("enum")) {
        std::vector<std::string> values;
        for (const auto& v : node["enum"]) values.push_back(md_code(v.dump()));
        return (values.size() == 1 ? "" : "one of ") + join(values, ", ");
    }
    for (const char* key : {"oneOf", "anyOf"})
        if (node.contains(key) && !constraint_only(node[key])) {
            std::vector<std::string> alternatives;
            for (const auto& alt : node[key]) alternatives.push_back(type_text(alt, path, unit));
            return join(alternatives, " or ");
        }
    std::vector<std::string> types = type_names(node);
    if (types.empty() && node.contains("properties")) types = {"object"};
    if (types.empty()) return "any";
    std::vector<std::string> parts;
    for (const auto& t : types) parts.push_back(typed_name(t, node, path, unit));
    return join(parts, " or ");
}

// The shapes a rule's branch gives property `name` of `node` ("servers": streamServers in a stream
// lab), as links, when the property itself does not say.
std::vector<std::string> SchemaDoc::refinements(const ordered_json& node, const std::string& name) {
    std::vector<std::string> out;
    std::function<void(const ordered_json&)> scan = [&](const ordered_json& b) {
        if (!b.is_object()) return;
        if (b.contains("properties") && b["properties"].contains(name)) {
            const ordered_json& p = b["properties"][name];
            const ordered_json* ref = p.contains("$ref") ? &p["$ref"] : nullptr;
            if (!ref && p.contains("items") && p["items"].contains("$ref")) ref = &p["items"]["$ref"];
            if (ref) {
                out.push_back(link_to_def(def_name(*ref)));
                use(def_name(*ref), m_refining + (p.contains("$ref") ? "" : "[]"));
            }
        }
        for (const char* key : {"then", "else"})
            if (b.contains(key)) scan(b[key]);
    };
    if (node.contains("allOf"))
        for (const auto& rule : node["allOf"]) scan(rule);
    return out;
}

Row SchemaDoc::property_row(const std::string& name, const ordered_json& p, const std::string& path, bool required,
                            const std::vector<std::string>& refined, const std::string& parent_unit) {
    Row row;
    row.field = md_code(path);
    row.unit = unit_of(name, parent_unit);
    std::string description = p.value("description", "");
    if (description.empty() && p.contains("$ref")) description = def(def_name(p["$ref"])).value("description", "");
    if (description.empty()) m_undocumented.push_back(path);
    const ordered_json& node = inline_node(p);
    row.type = !refined.empty() && !node.contains("type") ? join(refined, " or ") : type_text(p, path, row.unit);
    if (!refined.empty() && node.contains("type") && type_names(node) == std::vector<std::string>{"array"})
        row.type = "array of " + join(refined, " or ") + " (see the rules)";
    const std::string in_words = take_default_sentence(description);
    if (p.contains("default"))
        row.default_value = md_code(p["default"].dump());
    else if (!in_words.empty())
        row.default_value = md_escape(in_words);
    else
        row.default_value = required ? "*required*" : "—";
    row.description = md_escape(description);
    if (p.contains("examples")) {
        std::vector<std::string> examples;
        for (const auto& e : p["examples"]) examples.push_back(md_code(e.dump()));
        row.description += (row.description.empty() ? "" : " ") + std::string("Example: ") + join(examples, " or ") + ".";
    }
    if (row.unit.empty()) row.unit = "—";
    return row;
}

std::string SchemaDoc::rule_text(const ordered_json& rule) {
    std::string text = rule.value("description", "");
    if (text.empty() && rule.contains("then")) text = rule["then"].value("description", "");
    text = md_escape(text);
    if (!rule.contains("then") || !rule["then"].contains("properties")) return text;
    // The names a branch allows per member (opFields: the fields each op carries).
    std::map<std::string, std::vector<std::string>> by_names;
    for (const auto& [member, p] : rule["then"]["properties"].items()) {
        std::vector<std::string> names;
        if (p.contains("propertyNames") && p["propertyNames"].contains("enum"))
            for (const auto& v : p["propertyNames"]["enum"]) names.push_back(md_code(v.get<std::string>()));
        else if (p.value("maxProperties", -1) == 0)
            names.push_back("nothing");
        else
            continue;
        by_names[join(names, ", ")].push_back(md_code(member));
    }
    for (const auto& [names, members] : by_names) {
        if (!text.empty() && text.back() != '.') text += '.';
        text += fmt::format(" {} may name: {}.", join(members, " and "), names);
    }
    return text;
}

std::vector<std::string> SchemaDoc::rules(const ordered_json& node, const std::string& path, const std::string& base) {
    std::vector<std::string> out;
    if (node.contains("allOf"))
        for (size_t i = 0; i < node["allOf"].size(); ++i) {
            const ordered_json& rule = node["allOf"][i];
            if (!rule.contains("description") && !(rule.contains("then") && rule["then"].contains("description")))
                m_undocumented.push_back(fmt::format("{} (rule {} of allOf)", path, i + 1));
            out.push_back(rule_text(rule));
        }
    for (const char* key : {"oneOf", "anyOf"})
        if (node.contains(key) && constraint_only(node[key]))
            m_undocumented.push_back(fmt::format("{} ({} outside allOf: give it an allOf item with a description)", path, key));
    for (const char* key : {"not", "if"})
        if (node.contains(key))
            m_undocumented.push_back(fmt::format("{} ({} outside allOf: give it an allOf item with a description)", path, key));
    if (node.contains("$ref") && node.contains("properties")) {
        use(def_name(node["$ref"]), base);
        out.push_back("Also every rule of " + link_to_def(def_name(node["$ref"])) + ".");
    }
    return out;
}

void SchemaDoc::object_section(const ordered_json& node, const std::string& base, const std::string& heading,
                               const std::string& intro, const std::string& unit) {
    if (!m_described_paths.insert(heading).second) return;
    const size_t at = m_sections.size();
    m_sections.push_back({heading, intro, {}, {}, m_in_shared});
    Section s = m_sections[at];
    std::set<std::string> required;
    if (node.contains("required"))
        for (const auto& r : node["required"]) required.insert(r.get<std::string>());
    for (const auto& [name, p] : node["properties"].items()) {
        const std::string path = base.empty() ? name : base + "." + name;  // "…": a shared definition's member
        m_refining = path;
        const std::vector<std::string> refined = refinements(node, name);
        s.rows.push_back(property_row(name, p, path, required.count(name) > 0, refined, unit));
    }
    s.rules = rules(node, heading, base);
    m_sections[at] = std::move(s);
}

void SchemaDoc::shared_sections() {
    for (const auto& [name, d] : m_schema.at("$defs").items()) {
        if (!m_shared.count(name)) continue;
        m_shared_name = name;
        std::string intro = md_escape(d.value("description", ""));
        if (intro.empty()) m_undocumented.push_back("$defs/" + name);
        const std::vector<std::string>& used = m_all_uses[name];
        // Used in one place: its members' paths are whole ("`cases[].sessions[].steps[]`").
        const bool one_path = used.size() == 1 && used.front().size() > 2 && used.front().front() == '`';
        const std::string base = one_path ? used.front().substr(1, used.front().size() - 2) : "…";
        const std::string type = d.contains("properties") || d.contains("allOf") ? "" : type_text(d, base, "");
        if (!type.empty()) intro += (intro.empty() ? "" : " ") + std::string("Type: ") + type + ".";
        intro += "\n\nUsed at: " + (used.empty() ? std::string("rules only") : join(used, ", ")) + ".";
        m_in_shared = true;
        if (d.contains("properties"))
            object_section(d, base, md_code(name), intro, "");
        else
            m_sections.push_back({md_code(name), intro, {}, rules(d, name, base), true});
        m_in_shared = false;
    }
}

// Two passes: the first finds where each shared definition is used (a shared section can use
// another), the second writes every section with those lists complete.
void SchemaDoc::document() {
    for (int pass = 0; pass < 2; ++pass) {
        m_all_uses = m_used_at;
        m_used_at.clear();
        m_sections.clear();
        m_undocumented.clear();
        m_described_paths.clear();
        object_section(m_schema, "", "Top level", "", "");
        shared_sections();
    }
}

void write_section(const Section& s, const std::string& level, std::ostream& out) {
    out << level << ' ' << s.heading << "\n\n";
    if (!s.intro.empty()) out << s.intro << "\n\n";
    if (!s.rows.empty()) {
        out << "| Field | Type | Default | Unit | Description |\n| --- | --- | --- | --- | --- |\n";
        for (const auto& r : s.rows)
            out << fmt::format("| {} | {} | {} | {} | {} |\n", r.field, r.type, r.default_value, r.unit, r.description);
        out << '\n';
    }
    if (!s.rules.empty()) {
        out << "Rules:\n\n";
        for (const auto& r : s.rules) out << "- " << r << '\n';
        out << '\n';
    }
}

const char* k_how_to_read =
    "How to read the tables. **Field** is the member's JSON path in a scenario file: `a.b` a member of an "
    "object, `a[]` an array's items, `<name>` a key of your choosing; a shared definition's members start "
    "with `…` (the places it is used are listed under it). **Type** links to the section of an object or "
    "a shared definition. **Default** is what the loader takes when the member is absent: *required* "
    "means the file must give it, — that absent means none, off or empty. **Unit** is the member's, "
    "from its name (`_ms` milliseconds, `_us` microseconds, `_bytes` bytes, `_pct` percent). The loader "
    "checks more than the schema can (ids unique across files, events naming known orders, fault "
    "targets the lab has) and names the JSON path of whatever it refuses.";

std::string SchemaDoc::render(const std::string& regenerate) {
    std::ostringstream out;
    out << "# Scenario file reference\n\n";
    out << "<!-- Generated by `" << regenerate << "` from scenarios/schema.json; do not edit. -->\n\n";
    out << "> Generated by `" << regenerate << "` from `scenarios/schema.json`; do not edit this file: change "
        << "the schema (its descriptions, defaults and examples) and run the command again. `ctest -L lint` "
        << "fails while this file is stale.\n\n";
    out << md_escape(m_schema.value("description", "")) << "\n\n" << k_how_to_read << "\n\n## Contents\n\n";
    Slugger slugger;
    for (const char* h : {"Scenario file reference", "Contents"}) slugger.add(h);
    bool shared_heading = false;
    for (const auto& s : m_sections) {
        if (s.shared && !shared_heading) {
            out << "- [Shared definitions](#shared-definitions)\n";
            shared_heading = true;
        }
        out << (s.shared ? "  - " : "- ") << fmt::format("[{}](#{})\n", s.heading, github_slug(s.heading));
    }
    out << '\n';
    shared_heading = false;
    for (const auto& s : m_sections) {
        if (s.shared && !shared_heading) {
            out << "## Shared definitions\n\nDefinitions used in several places, or chosen by a rule.\n\n";
            slugger.add("Shared definitions");
            shared_heading = true;
        }
        // Every link above assumed each heading's plain anchor: two headings must not share one.
        if (slugger.add(s.heading) != github_slug(s.heading))
            throw std::logic_error("schema reference: two sections would share the anchor " + github_slug(s.heading));
        write_section(s, s.shared ? "###" : "##", out);
    }
    std::string text = out.str();
    while (text.size() >= 2 && text[text.size() - 1] == '\n' && text[text.size() - 2] == '\n') text.pop_back();
    return text;
}



ordered_json parse_schema(const std::string& text) {
    try {
        return ordered_json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("scenarios/schema.json is not JSON: ") + e.what());
    }
}

}  // namespace schema_md


std::string schema_markdown(const std::string& schema_text, const std::string& regenerate) {
    const schema_md::ordered_json schema = schema_md::parse_schema(schema_text);
    schema_md::SchemaDoc doc(schema);
    doc.document();
    if (!doc.undocumented().empty())
        throw std::runtime_error("scenarios/schema.json: these have no \"description\", so the reference cannot say "
                                 "what they are; add one to each: " + schema_md::join(doc.undocumented(), "; "));
    return doc.render(regenerate);
}

std::vector<std::string> undocumented_in_schema(const std::string& schema_text) {
    const schema_md::ordered_json schema = schema_md::parse_schema(schema_text);
    schema_md::SchemaDoc doc(schema);
    doc.document();
    return doc.undocumented();
}

}  // namespace relab
