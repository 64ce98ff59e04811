// Writing safetensors files and Hugging Face model folders.
//
// Every file is written atomically (models/base/atomic_file.h), so a failed
// or interrupted write never leaves a truncated file that a later open()
// would have to diagnose.
#include "models/safetensors.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

#include "models/base/atomic_file.h"
#include "models/base/error.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

constexpr char kSingleFile[] = "model.safetensors";
constexpr char kIndexFile[] = "model.safetensors.index.json";
constexpr char kMetadataKey[] = "__metadata__";
constexpr size_t kDataAlignment = 8;  // HF aligns the data section so it can be mapped as is

// Removes a file that would shadow or contradict what was just written.
void remove_stale(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);
  SEED_CHECK(!ec, kIo) << "cannot remove stale " << path.string() << ": " << ec.message();
}

std::string shard_name(size_t index, size_t count) {
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return name;
}

}  // namespace

void write_safetensors(const std::string& path, const NamedTensors& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  std::vector<at::Tensor> contiguous;
  contiguous.reserve(tensors.size());
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    SEED_CHECK(name != kMetadataKey && !header.contains(name), kInvalidArgument)
        << path << ": tensor name '" << name << "' is reserved or appears twice";
    at::Tensor cpu = tensor.to(torch::kCPU).contiguous();
    DType dtype;
    try {
      dtype = dtype_from_scalar_type(cpu.scalar_type());
    } catch (const Error& e) {
      throw Error(e.kind(), path + ": tensor '" + name + "': " + e.what());
    }
    const uint64_t nbytes = cpu.nbytes();
    header[name] = {{"dtype", dtype_name(dtype)},
                    {"shape", cpu.sizes().vec()},
                    {"data_offsets", nlohmann::ordered_json::array({offset, offset + nbytes})}};
    offset += nbytes;
    contiguous.push_back(std::move(cpu));
  }

  // Spaces are JSON whitespace: padding the header aligns the data section.
  std::string text = header.dump();
  text.append((kDataAlignment - text.size() % kDataAlignment) % kDataAlignment, ' ');
  uint8_t length[8];
  for (size_t i = 0; i < sizeof(length); ++i) {
    length[i] = static_cast<uint8_t>(text.size() >> (8 * i));
  }

  AtomicFile file(path);
  file.write(length, sizeof(length));
  file.write(text.data(), text.size());
  for (const at::Tensor& tensor : contiguous) file.write(tensor.data_ptr(), tensor.nbytes());
  file.commit();
}

void write_checkpoint(const std::string& model_dir, const NamedTensors& tensors,
                      int64_t max_shard_bytes) {
  SEED_CHECK(max_shard_bytes > 0, kInvalidArgument)
      << "max_shard_bytes must be positive, got " << max_shard_bytes;
  std::error_code ec;
  fs::create_directories(model_dir, ec);
  SEED_CHECK(!ec, kIo) << "cannot create folder " << model_dir << ": " << ec.message();
  const fs::path dir(model_dir);

  // Greedy, in the given order: a shard closes when the next tensor would
  // push it past the limit (a tensor larger than the limit gets its own).
  std::vector<NamedTensors> shards(1);
  int64_t shard_bytes = 0;
  int64_t total_bytes = 0;
  for (const auto& named : tensors) {
    const auto nbytes = static_cast<int64_t>(named.second.nbytes());
    if (!shards.back().empty() && shard_bytes + nbytes > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(named);
    shard_bytes += nbytes;
    total_bytes += nbytes;
  }

  // New files are written before stale ones go, so the folder always holds
  // one complete checkpoint (Checkpoint::open prefers the index).
  if (shards.size() == 1) {
    write_safetensors((dir / kSingleFile).string(), tensors);
    remove_stale(dir / kIndexFile);
    return;
  }
  nlohmann::json weight_map = nlohmann::json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string name = shard_name(i, shards.size());
    write_safetensors((dir / name).string(), shards[i]);
    for (const auto& named : shards[i]) weight_map[named.first] = name;
  }
  const nlohmann::json index = {{"metadata", {{"total_size", total_bytes}}},
                                {"weight_map", weight_map}};
  write_file_atomically((dir / kIndexFile).string(), index.dump(2) + "\n");
  remove_stale(dir / kSingleFile);
}

}  // namespace seed::models
