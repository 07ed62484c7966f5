#include "bench/bench_json.h"

#include <stdexcept>

namespace relab {

namespace {

const char* to_string(TargetKind k) { return k == TargetKind::at_most ? "at_most" : "at_least"; }

}  // namespace

nlohmann::json figure_json(const BenchFigure& f) {
    nlohmann::json j = {
        {"name", f.name},
        {"run_name", f.name},
        {"run_type", "iteration"},
        {"iterations", f.iterations},
        {"real_time", f.real_time},
        {"time_unit", f.time_unit},
    };
    if (!f.label.empty()) j["label"] = f.label;
    if (!f.measured.empty()) j["measured"] = f.measured;
    if (f.items_per_second) j["items_per_second"] = *f.items_per_second;
    // A ratio that could not be computed is null, not absent, so a reader sees it was meant to be there.
    j["ratio"] = f.ratio ? nlohmann::json(*f.ratio) : nlohmann::json(nullptr);
    if (!f.ratio_of.empty()) j["ratio_of"] = f.ratio_of;
    if (f.target) {
        j["target"] = *f.target;
        j["target_kind"] = to_string(f.target_kind);
        j["target_of"] = f.target_of;
        const std::optional<bool> met = f.met();
        j["met"] = met ? nlohmann::json(*met) : nlohmann::json(nullptr);
    }
    for (const auto& [key, value] : f.raw.items())
        if (!j.contains(key)) j[key] = value;
    return j;
}

nlohmann::json bench_json(const BenchContext& c, const std::vector<BenchFigure>& figures) {
    nlohmann::json context = {
        {"date", c.date},
        {"host_name", c.host_name},
        {"num_cpus", c.num_cpus},
        {"jobs", c.jobs},
        {"relab_commit", c.relab_commit},
        {"command", c.command},
        {"library_build_type", "relab"},
    };
    if (c.redis_version) context["redis_version"] = *c.redis_version;
    if (c.redis_benchmark_version) context["redis_benchmark_version"] = *c.redis_benchmark_version;
    nlohmann::json benchmarks = nlohmann::json::array();
    for (const auto& f : figures) benchmarks.push_back(figure_json(f));
    return {{"context", std::move(context)}, {"benchmarks", std::move(benchmarks)}};
}

std::vector<BenchFigure> figures_from_json(const nlohmann::json& doc) {
    if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
        throw std::runtime_error("not a benchmark file: no \"benchmarks\" array");
    std::vector<BenchFigure> out;
    for (const auto& b : doc["benchmarks"]) {
        if (!b.is_object() || !b.contains("name") || !b["name"].is_string() || !b.contains("real_time") ||
            !b["real_time"].is_number())
            throw std::runtime_error("a benchmark without a \"name\" string and a numeric \"real_time\": " + b.dump());
        BenchFigure f;
        f.name = b["name"];
        f.real_time = b["real_time"];
        f.iterations = b.value("iterations", int64_t{0});
        f.time_unit = b.value("time_unit", std::string("ns"));
        f.label = b.value("label", std::string());
        f.measured = b.value("measured", std::string());
        if (b.contains("ratio") && b["ratio"].is_number()) f.ratio = b["ratio"].get<double>();
        f.ratio_of = b.value("ratio_of", std::string());
        if (b.contains("items_per_second") && b["items_per_second"].is_number())
            f.items_per_second = b["items_per_second"].get<double>();
        if (b.contains("target") && b["target"].is_number()) f.target = b["target"].get<double>();
        f.target_kind = b.value("target_kind", std::string("at_most")) == "at_least" ? TargetKind::at_least
                                                                                     : TargetKind::at_most;
        f.target_of = b.value("target_of", std::string("ratio"));
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace relab
