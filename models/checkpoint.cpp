// Checkpoint: the weights of a Hugging Face model folder, one file or shards.
//
// Every shard named by the index is opened (and so fully validated) once, and
// every tensor the index promises is checked to be in its shard, so a broken
// download fails at open() with the file at fault rather than midway through
// loading a model.
#include "models/safetensors.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

#include "models/base/error.h"
#include "models/base/json_fields.h"

namespace seed::models {
namespace {

namespace fs = std::filesystem;

constexpr char kSingleFile[] = "model.safetensors";
constexpr char kIndexFile[] = "model.safetensors.index.json";

}  // namespace

struct Checkpoint::Impl {
  std::string dir;
  std::vector<SafetensorsFile> shards;
  std::map<std::string, size_t> shard_of;  // tensor -> position in shards

  const SafetensorsFile& shard_with(const std::string& name) const {
    const auto it = shard_of.find(name);
    SEED_CHECK(it != shard_of.end(), kNotFound)
        << dir << ": the checkpoint has no tensor '" << name << "'";
    return shards[it->second];
  }
};

Checkpoint Checkpoint::open(const std::string& model_dir) {
  std::error_code ec;
  SEED_CHECK(fs::is_directory(model_dir, ec), kNotFound)
      << "model folder " << model_dir << " does not exist or is not a folder";
  auto impl = std::make_unique<Impl>();
  impl->dir = model_dir;
  const fs::path dir(model_dir);
  const std::string index_path = (dir / kIndexFile).string();
  const std::string single_path = (dir / kSingleFile).string();

  if (fs::exists(index_path, ec)) {
    const nlohmann::json index = read_json_file(index_path);
    SEED_CHECK(index.is_object() && index.contains("weight_map") && index["weight_map"].is_object(),
               kCorruption)
        << index_path << ": expected an object with \"weight_map\": {tensor: shard file}";
    std::map<std::string, size_t> shard_by_file;
    for (const auto& [tensor, file] : index["weight_map"].items()) {
      SEED_CHECK(file.is_string(), kCorruption)
          << index_path << ": weight_map entry for tensor '" << tensor << "' must be a file name";
      const std::string shard = file.get<std::string>();
      // Shards live in the folder itself; a path would escape it.
      SEED_CHECK(!shard.empty() && fs::path(shard).filename() == shard, kCorruption)
          << index_path << ": shard '" << shard << "' of tensor '" << tensor
          << "' must be a file name inside the folder";
      const auto [it, inserted] = shard_by_file.emplace(shard, impl->shards.size());
      if (inserted) {
        const fs::path shard_path = dir / shard;
        SEED_CHECK(fs::exists(shard_path, ec), kNotFound)
            << index_path << " puts tensor '" << tensor << "' in shard " << shard << ", but "
            << shard_path.string() << " does not exist; is the download complete?";
        impl->shards.push_back(SafetensorsFile::open(shard_path.string()));
      }
      SEED_CHECK(impl->shards[it->second].contains(tensor), kCorruption)
          << index_path << " puts tensor '" << tensor << "' in shard " << shard
          << ", but that shard has no such tensor";
      impl->shard_of[tensor] = it->second;
    }
  } else if (fs::exists(single_path, ec)) {
    impl->shards.push_back(SafetensorsFile::open(single_path));
    for (const TensorInfo& info : impl->shards[0].tensors()) impl->shard_of[info.name] = 0;
  } else {
    SEED_FAIL(kNotFound) << "no weights in " << model_dir << ": expected " << kSingleFile << " or "
                         << kIndexFile;
  }
  return Checkpoint(std::move(impl));
}

Checkpoint::Checkpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Checkpoint::Checkpoint(Checkpoint&&) noexcept = default;
Checkpoint& Checkpoint::operator=(Checkpoint&&) noexcept = default;
Checkpoint::~Checkpoint() = default;

at::Tensor Checkpoint::read(const std::string& name,
                            const std::vector<int64_t>& expected_shape) const {
  return impl_->shard_with(name).read(name, expected_shape);
}

const TensorInfo& Checkpoint::info(const std::string& name) const { return impl_->shard_with(name).info(name); }

at::Tensor Checkpoint::borrow(const std::string& name, const std::vector<int64_t>& expected_shape) const {
  return impl_->shard_with(name).borrow(name, expected_shape);
}

}  // namespace seed::models
