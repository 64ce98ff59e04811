#include "launch/sweep_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "models/base/error.h"
#include "search/search_parameters.h"

namespace seed::launch {
namespace {

using nlohmann::json;

// Options the sweep sets for every point itself.
const std::set<std::string> kSweepOwned = {"out", "resume", "tree-out", "help"};

// Slug order: what the reader scans for first.
const std::vector<std::string> kSlugOrder = {"task", "search", "depth", "n", "b", "samples", "beams", "beam-width",
                                             "simulations", "engine", "draft", "draft-length", "seed", "limit"};

size_t slug_rank(const std::string& key) {
  return std::find(kSlugOrder.begin(), kSlugOrder.end(), key) - kSlugOrder.begin();
}

std::string flag_spelling(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

bool is_scalar(const json& v) { return v.is_string() || v.is_number() || v.is_boolean(); }

// A run option's value: a scalar, or a list of scalars (--k-config 2 2 1).
bool is_option_value(const json& v) {
  return is_scalar(v) || (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), is_scalar));
}

std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string slug_text(const json& v) {
  std::string text;
  if (v.is_array()) {
    for (const json& e : v) text += (text.empty() ? "" : "-") + scalar_text(e);
  } else {
    text = scalar_text(v);
  }
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
  }
  return text;
}

void check_key(const std::string& file, const std::string& key, const RunOptionCheck& is_run_option) {
  SEED_CHECK(!kSweepOwned.count(key), kInvalidArgument)
      << file << ": key '" << key << "' is set by the sweep for each point; remove it";
  SEED_CHECK(is_run_option(key), kInvalidArgument)
      << file << ": unknown key '" << key << "': not a `seed run` option (see seed run --help)";
}

// One grid object's keys and value lists, checked, in flag spelling.
std::vector<std::pair<std::string, std::vector<json>>> grid_axes(const json& grid, const std::string& where,
                                                                 const RunOptionCheck& is_run_option) {
  SEED_CHECK(grid.is_object(), kInvalidArgument) << where << ": must be an object of run options, not " << grid.dump();
  std::vector<std::pair<std::string, std::vector<json>>> axes;
  for (const auto& [raw, value] : grid.items()) {
    const std::string key = flag_spelling(raw);
    check_key(where, key, is_run_option);
    std::vector<json> values;
    if (value.is_array()) {
      SEED_CHECK(!value.empty(), kInvalidArgument) << where << ": key '" << raw << "' is an empty list";
      values.assign(value.begin(), value.end());
    } else {
      values.push_back(value);
    }
    for (const json& v : values) {
      SEED_CHECK(is_option_value(v), kInvalidArgument)
          << where << ": key '" << raw << "' has value " << v.dump() << "; expected a string, number or boolean";
    }
    axes.emplace_back(key, std::move(values));
  }
  // The first key of the slug varies slowest, so that points that differ
  // only in the engine sit next to each other.
  std::stable_sort(axes.begin(), axes.end(), [](const auto& a, const auto& b) { return slug_rank(a.first) < slug_rank(b.first); });
  return axes;
}

std::string make_slug(const json& grid_params) {
  std::vector<std::string> keys;
  for (const std::string& k : kSlugOrder) {
    if (grid_params.contains(k)) keys.push_back(k);
  }
  for (const auto& [k, v] : grid_params.items()) {  // the rest, alphabetically (json orders keys)
    if (std::find(kSlugOrder.begin(), kSlugOrder.end(), k) == kSlugOrder.end()) keys.push_back(k);
  }
  std::string slug;
  for (const std::string& k : keys) {
    json value = grid_params.at(k);
    // A task is named by its folder's last component.
    if (k == "task" && value.is_string()) value = std::filesystem::path(value.get<std::string>()).filename().string();
    slug += (slug.empty() ? "" : "_") + k + "=" + slug_text(value);
  }
  return slug.empty() ? "run" : slug;
}

void check_search_parameters(const SweepPoint& p, const std::string& file) {
  const auto search = p.params.find("search");
  if (search == p.params.end() || !search->is_string()) return;  // `seed run`'s default search takes what it takes
  const std::string& algorithm = search->get<std::string>();
  if (!search::parameters_by_search().count(algorithm)) return;  // `seed run` names an unknown search itself
  for (const auto& [key, value] : p.params.items()) {
    SEED_CHECK(!search::is_search_parameter(key) || search::search_reads(algorithm, key), kInvalidArgument)
        << file << ": key '" << key << "' (" << value.dump() << ") is not a parameter of search '" << algorithm
        << "' (point " << p.slug << ")";
  }
}

}  // namespace

std::vector<std::string> SweepPoint::run_args() const {
  std::vector<std::string> args;
  for (const auto& [key, value] : params.items()) {
    if (value.is_boolean()) {
      if (value.get<bool>()) args.push_back("--" + key);
      continue;
    }
    args.push_back("--" + key);
    if (value.is_array()) {
      for (const json& v : value) args.push_back(scalar_text(v));
    } else {
      args.push_back(scalar_text(value));
    }
  }
  return args;
}

SweepConfig expand_sweep_config(const json& config, const std::string& file, const RunOptionCheck& is_run_option) {
  SEED_CHECK(config.is_object(), kInvalidArgument) << file << ": must hold one JSON object";
  SweepConfig out;
  json base = json::object();
  json grids = json::array({json::object()});
  for (const auto& [raw, value] : config.items()) {
    if (raw == "grid") {
      grids = value.is_array() ? value : json::array({value});
      SEED_CHECK(!grids.empty(), kInvalidArgument) << file << ": key 'grid' is an empty list";
      continue;
    }
    if (raw == "baseline") {
      SEED_CHECK(value.is_string(), kInvalidArgument)
          << file << ": key 'baseline' is " << value.dump() << "; expected an engine name such as \"ar\"";
      out.baseline = value.get<std::string>();
      continue;
    }
    const std::string key = flag_spelling(raw);
    check_key(file, key, is_run_option);
    SEED_CHECK(!(value.is_array() && value.empty()), kInvalidArgument) << file << ": key '" << raw << "' is an empty list";
    SEED_CHECK(is_option_value(value), kInvalidArgument)
        << file << ": key '" << raw << "' has value " << value.dump() << "; expected a string, number or boolean";
    base[key] = value;
  }
  json normalized_grids = json::array();
  std::map<std::string, json> seen;  // slug -> params
  for (size_t g = 0; g < grids.size(); ++g) {
    const std::string where = file + ": grid" + (grids.size() > 1 ? "[" + std::to_string(g) + "]" : "");
    const auto axes = grid_axes(grids[g], where, is_run_option);
    json normalized = json::object();
    for (const auto& [key, values] : axes) normalized[key] = values;
    normalized_grids.push_back(normalized);
    // Odometer over the axes: the last key varies fastest.
    std::vector<size_t> at(axes.size(), 0);
    while (true) {
      json grid_params = json::object();
      for (size_t a = 0; a < axes.size(); ++a) grid_params[axes[a].first] = axes[a].second[at[a]];
      SweepPoint point;
      point.params = base;
      for (const auto& [k, v] : grid_params.items()) point.params[k] = v;
      point.slug = make_slug(grid_params);
      SEED_CHECK(point.params.contains("task"), kInvalidArgument)
          << file << ": no 'task' for point " << point.slug << "; set \"task\": \"tasks/NAME\"";
      check_search_parameters(point, file);
      const auto [it, fresh] = seen.emplace(point.slug, point.params);
      SEED_CHECK(fresh || it->second == point.params, kInvalidArgument)
          << file << ": points " << it->second.dump() << " and " << point.params.dump() << " share the folder name "
          << point.slug;
      if (fresh) out.points.push_back(std::move(point));
      size_t a = axes.size();
      while (a > 0 && ++at[a - 1] == axes[a - 1].second.size()) at[--a] = 0;
      if (a == 0) break;
    }
  }
  out.normalized = {{"base", base}, {"grid", normalized_grids}, {"baseline", out.baseline}};
  return out;
}

json read_sweep_config(const std::string& path) {
  std::ifstream in(path);
  SEED_CHECK(in.good(), kNotFound) << "--config: " << path << ": no such file";
  json config;
  try {
    config = json::parse(in);
  } catch (const json::exception& e) {
    SEED_FAIL(kCorruption) << path << ": not valid JSON: " << e.what();
  }
  return config;
}

std::vector<SweepPoint> shard_points(const std::vector<SweepPoint>& points, int index, int count) {
  SEED_CHECK(count >= 1 && index >= 0 && index < count, kInvalidArgument)
      << "--shard " << index << "/" << count << ": expected I/N with 0 <= I < N";
  std::vector<SweepPoint> mine;
  for (size_t i = index; i < points.size(); i += count) mine.push_back(points[i]);
  return mine;
}

}  // namespace seed::launch
