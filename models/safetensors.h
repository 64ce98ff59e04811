// safetensors: the weight format of Hugging Face model folders.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON
// ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
// {str: str}}), then the raw little-endian tensor bytes; offsets are relative
// to the end of the header. This is the project's own small parser: it maps
// the file read-only and validates everything before handing out a byte
// (header inside the file, offsets inside the data, size == dtype x shape,
// no overlaps), and every error names the file and the tensor.
//
// Thread-safety: a SafetensorsFile/Checkpoint is immutable after open();
// const methods may be called from any thread. The file stays mapped until
// the object is destroyed and must not be truncated meanwhile (the OS would
// raise SIGBUS); tensors from read() are copies and outlive it, tensors
// from borrow() do not.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace seed::models {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

const char* dtype_name(DType dtype);           // "F32", as in the file format
DType dtype_from_scalar_type(c10::ScalarType); // kInvalidArgument if unsupported
c10::ScalarType scalar_type_of_dtype(DType dtype);  // the torch type a tensor of `dtype` reads as

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into the data section, end exclusive
  uint64_t end = 0;
};

// One .safetensors file, mapped read-only.
class SafetensorsFile {
 public:
  // Opens and validates `path`. Throws seed::Error (kNotFound, kIo,
  // kCorruption) naming the file and, where one is at fault, the tensor.
  static SafetensorsFile open(const std::string& path);

  const std::vector<TensorInfo>& tensors() const;  // in file order
  bool contains(const std::string& name) const;
  const TensorInfo& info(const std::string& name) const;  // kNotFound if absent

  // A CPU tensor holding a copy of `name` in its stored dtype. The mapped
  // pages it was copied from are released, so loading a model never holds
  // the file in memory beside its copies.
  at::Tensor read(const std::string& name) const;
  // As read(), and checks the shape: kCorruption naming file, tensor,
  // expected and found shapes if they differ.
  at::Tensor read(const std::string& name, const std::vector<int64_t>& expected_shape) const;
  // As read() with a shape, without the copy: the tensor is the mapped bytes
  // themselves, read-only (a write faults) and valid only while this file is
  // open; the pages are released when its last reference goes. For a tensor
  // used up while the file is open, as weights packed at load are: a copy
  // would first have to fault in as much fresh memory. A tensor whose bytes
  // are not aligned to its element size is copied.
  at::Tensor borrow(const std::string& name, const std::vector<int64_t>& expected_shape) const;

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  ~SafetensorsFile();

 private:
  struct Impl;
  explicit SafetensorsFile(std::unique_ptr<Impl> impl);
  // info(name), or kCorruption if its shape is not `expected_shape`.
  const TensorInfo& checked_info(const std::string& name, const std::vector<int64_t>& expected_shape) const;
  std::unique_ptr<Impl> impl_;
};

// The weights of a model folder: model.safetensors, or the shards listed by
// model.safetensors.index.json ({"weight_map": {tensor: file}}).
class Checkpoint {
 public:
  // Throws kNotFound if the folder has neither file (the message lists what
  // it looked for), kCorruption for a malformed index or shard.
  static Checkpoint open(const std::string& model_dir);

  // As SafetensorsFile::read with a shape; kNotFound names dir + tensor.
  at::Tensor read(const std::string& name, const std::vector<int64_t>& expected_shape) const;
  // As SafetensorsFile::borrow: valid while this checkpoint is open.
  at::Tensor borrow(const std::string& name, const std::vector<int64_t>& expected_shape) const;
  // Its dtype and shape, read from the header; kNotFound names dir + tensor.
  const TensorInfo& info(const std::string& name) const;

  Checkpoint(Checkpoint&&) noexcept;
  Checkpoint& operator=(Checkpoint&&) noexcept;
  ~Checkpoint();

 private:
  struct Impl;
  explicit Checkpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Writes `tensors` (CPU or not; any supported dtype, stored as given) to
// `path`, in the order given, 8-byte aligned header as Hugging Face writes it.
// Throws kIo if the file cannot be written; the file is written to a temporary
// name and renamed, so a failure never leaves a truncated file behind.
void write_safetensors(const std::string& path, const NamedTensors& tensors);

// Writes model.safetensors into `model_dir`, or, when the tensors exceed
// `max_shard_bytes`, model-0000i-of-0000n.safetensors shards plus
// model.safetensors.index.json.
void write_checkpoint(const std::string& model_dir, const NamedTensors& tensors,
                      int64_t max_shard_bytes = int64_t{2} << 30);

}  // namespace seed::models
