#include "spec/drafters/aded/trigram_table.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "models/base/error.h"

namespace seed::spec {
namespace {

constexpr char kMagic[8] = {'S', 'E', 'E', 'D', 'T', 'R', 'I', '\0'};
constexpr uint32_t kVersion = 1;

template <typename T>
void write_value(std::ofstream& out, T value) {
  out.write(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T read_value(std::ifstream& in, const std::string& path, const char* what) {
  T value{};
  in.read(reinterpret_cast<char*>(&value), sizeof(T));
  SEED_CHECK(in.gcount() == static_cast<std::streamsize>(sizeof(T)), kCorruption)
      << path << ": truncated tri-gram table (reading " << what << ")";
  return value;
}

}  // namespace

void sort_successors(std::vector<TrigramSuccessor>& row) {
  std::sort(row.begin(), row.end(), [](const TrigramSuccessor& x, const TrigramSuccessor& y) {
    return x.weight != y.weight ? x.weight > y.weight : x.token < y.token;
  });
}

TrigramTable TrigramTable::build(const std::vector<std::vector<int32_t>>& documents, int top_k) {
  SEED_CHECK(top_k >= 1, kInvalidArgument) << "tri-gram table: top_k " << top_k << " < 1";
  std::unordered_map<uint64_t, std::unordered_map<int32_t, int64_t>> counts;
  for (const std::vector<int32_t>& doc : documents) {
    for (size_t i = 0; i + 2 < doc.size(); ++i) ++counts[key(doc[i], doc[i + 1])][doc[i + 2]];
  }
  TrigramTable table;
  table.rows_.reserve(counts.size());
  for (const auto& [context, next] : counts) {
    int64_t total = 0;
    for (const auto& entry : next) total += entry.second;
    std::vector<TrigramSuccessor> row;
    row.reserve(next.size());
    for (const auto& [token, count] : next) {
      row.push_back({token, static_cast<float>(static_cast<double>(count) / static_cast<double>(total))});
    }
    sort_successors(row);
    if (row.size() > static_cast<size_t>(top_k)) row.resize(static_cast<size_t>(top_k));
    table.rows_.emplace(context, std::move(row));
  }
  return table;
}

const std::vector<TrigramSuccessor>* TrigramTable::successors(int32_t a, int32_t b) const {
  const auto it = rows_.find(key(a, b));
  return it == rows_.end() ? nullptr : &it->second;
}

void TrigramTable::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  SEED_CHECK(out.good(), kIo) << "cannot write tri-gram table " << path;
  // Sorted contexts: the same table always writes the same bytes.
  std::vector<uint64_t> keys;
  keys.reserve(rows_.size());
  for (const auto& entry : rows_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  out.write(kMagic, sizeof(kMagic));
  write_value(out, kVersion);
  write_value(out, static_cast<uint64_t>(keys.size()));
  for (const uint64_t k : keys) {
    const std::vector<TrigramSuccessor>& row = rows_.at(k);
    write_value(out, static_cast<int32_t>(k >> 32));
    write_value(out, static_cast<int32_t>(k & 0xffffffffu));
    write_value(out, static_cast<uint32_t>(row.size()));
    for (const TrigramSuccessor& s : row) {
      write_value(out, s.token);
      write_value(out, s.weight);
    }
  }
  out.flush();
  SEED_CHECK(out.good(), kIo) << "error writing tri-gram table " << path;
}

TrigramTable TrigramTable::load(const std::string& path) {
  std::error_code ec;
  SEED_CHECK(std::filesystem::is_regular_file(path, ec), kNotFound) << "tri-gram table " << path << " does not exist";
  std::ifstream in(path, std::ios::binary);
  SEED_CHECK(in.good(), kIo) << "cannot open tri-gram table " << path;
  char magic[sizeof(kMagic)] = {};
  in.read(magic, sizeof(magic));
  SEED_CHECK(in.gcount() == static_cast<std::streamsize>(sizeof(magic)) && std::memcmp(magic, kMagic, sizeof(magic)) == 0,
             kCorruption)
      << path << ": not a tri-gram table (write one with `seed trigrams`)";
  const uint32_t version = read_value<uint32_t>(in, path, "the version");
  SEED_CHECK(version == kVersion, kCorruption) << path << ": tri-gram table version " << version << ", expected " << kVersion;
  const uint64_t contexts = read_value<uint64_t>(in, path, "the context count");
  TrigramTable table;
  for (uint64_t i = 0; i < contexts; ++i) {
    const int32_t a = read_value<int32_t>(in, path, "a context");
    const int32_t b = read_value<int32_t>(in, path, "a context");
    const uint32_t n = read_value<uint32_t>(in, path, "a row length");
    SEED_CHECK(a >= 0 && b >= 0, kCorruption) << path << ": context " << i << " has a negative token";
    std::vector<TrigramSuccessor> row(n);
    for (uint32_t j = 0; j < n; ++j) {
      row[j].token = read_value<int32_t>(in, path, "a successor");
      row[j].weight = read_value<float>(in, path, "a weight");
      SEED_CHECK(row[j].token >= 0 && row[j].weight > 0 && row[j].weight <= 1, kCorruption)
          << path << ": context (" << a << ", " << b << ") entry " << j << ": token " << row[j].token
          << ", weight " << row[j].weight << " (expected a token >= 0 and a weight in (0, 1])";
      SEED_CHECK(j == 0 || row[j - 1].weight >= row[j].weight, kCorruption)
          << path << ": context (" << a << ", " << b << ") is not sorted by weight";
    }
    SEED_CHECK(table.rows_.emplace(key(a, b), std::move(row)).second, kCorruption)
        << path << ": context (" << a << ", " << b << ") appears twice";
  }
  SEED_CHECK(in.peek() == std::char_traits<char>::eof(), kCorruption)
      << path << ": bytes after the last of " << contexts << " contexts";
  return table;
}

}  // namespace seed::spec
