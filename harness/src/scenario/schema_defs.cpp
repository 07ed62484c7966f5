#include "scenario/schema_defs.h"

#include <string_view>
#include <tuple>

#include "describe/describe.h"
#include "scenario/scenario.h"

namespace relab {

namespace {

using desc::ordered_json;

// The top-level sections a description gives whole: the file's key and the struct it holds.
template <class S>
struct Section {
    std::string_view key;
};

constexpr auto k_sections =
    std::tuple{Section<StreamSpec>{"stream"},     Section<WriteSpec>{"write"},       Section<LockSpec>{"lock"},
               Section<BufferSpec>{"buffer"},     Section<FanoutSpec>{"fanout"},     Section<ProducerSpec>{"producer"},
               Section<DispatcherSpec>{"dispatcher"}, Section<ShardSpec>{"shard"}, Section<RecoverySpec>{"recovery"},
               Section<GenerateSpec>{"generate"}, Section<SimSpec>{"sim"},         Section<SoakSpec>{"soak"},
               Section<IdemSpec>{"idem"},         Section<OrderSpec>{""},            Section<EventSpec>{""},
               Section<FaultSpec>{""}};

// `generated` laid over `existing`: the described keys replaced where they stand, new ones added
// at the end, and what no description gives (another reader's fields, rules across fields) kept.
ordered_json merged(ordered_json existing, const ordered_json& generated) {
    if (!existing.is_object()) existing = ordered_json::object();
    for (const char* key : {"description", "type", "additionalProperties", "$ref"})
        if (generated.contains(key)) existing[key] = generated.at(key);
    if (!generated.contains("properties")) return existing;
    ordered_json properties = existing.value("properties", ordered_json::object());
    for (const auto& [key, value] : generated.at("properties").items()) properties[key] = value;
    existing["properties"] = std::move(properties);
    ordered_json required = generated.value("required", ordered_json::array());
    for (const auto& key : existing.value("required", ordered_json::array()))
        if (!generated.at("properties").contains(key.get<std::string>()) &&
            std::find(required.begin(), required.end(), key) == required.end())
            required.push_back(key);
    if (required.empty())
        existing.erase("required");
    else
        existing["required"] = std::move(required);
    return existing;
}

template <class S>
void put_section(ordered_json& schema, ordered_json& defs, const Section<S>& section) {
    desc::Defs<S>::add(defs);
    if (section.key.empty()) return;
    const std::string key(section.key);
    ordered_json& at = schema["properties"][key];
    if constexpr (requires { desc::Described<S>::def; })
        at = merged(at, ordered_json{{"$ref", "#/$defs/" + std::string(desc::Described<S>::def)}});
    else
        at = merged(at, desc::schema_object<S>());
}

// The rule of the fault's hand-written part that refuses "link" on another action ("if" it is
// given, "then" the action is one of...) gets its list from the rows of fault/faults.cpp that act
// on a link, so that a new link fault is not listed by hand a second time.
void link_actions_from_rows(ordered_json& node) {
    if (node.is_array())
        for (auto& item : node) link_actions_from_rows(item);
    if (!node.is_object()) return;
    if (node.contains("if") && node["if"].value("required", ordered_json::array()) == ordered_json::array({"link"})) {
        ordered_json actions = ordered_json::array();
        for (const std::string& name : fault_action_names())
            if (acts_on_link(*fault_action_named(name))) actions.push_back(name);
        node["then"]["properties"]["action"]["enum"] = actions;
    }
    for (auto& [key, child] : node.items())
        if (key != "if" && key != "then") link_actions_from_rows(child);
}

}  // namespace

std::string schema_with_descriptions(const std::string& schema_text) {
    ordered_json schema = ordered_json::parse(schema_text);
    ordered_json defs = ordered_json::object();
    std::apply([&](const auto&... section) { (put_section(schema, defs, section), ...); }, k_sections);
    for (const auto& [name, def] : defs.items()) schema["$defs"][name] = merged(schema["$defs"][name], def);
    link_actions_from_rows(schema["$defs"]["fault"]);
    return desc::pretty_json(schema) + "\n";
}

}  // namespace relab
