// The safetensors reader: a strict parser over a read-only mapping.
//
// Nothing in the file is trusted. Every number in the header is range-checked
// before it takes part in arithmetic, and every tensor is checked against the
// data section before open() returns, so a truncated or hostile file raises
// seed::Error (kCorruption) instead of reading out of bounds later.
#include "models/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "models/base/error.h"

namespace seed::models {
namespace {

// The format is little-endian and read() copies bytes straight into tensors.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the safetensors reader assumes a little-endian host");

constexpr uint64_t kLengthBytes = 8;  // the u64 header length that opens a file
constexpr char kMetadataKey[] = "__metadata__";

// ordered_json keeps the header's order, which breaks ties between tensors
// that start at the same offset (empty ones).
using OrderedJson = nlohmann::ordered_json;

struct DTypeRow {
  DType dtype;
  const char* name;
  int64_t size;
  c10::ScalarType scalar_type;
};

constexpr DTypeRow kDTypes[] = {
    {DType::kF64, "F64", 8, c10::ScalarType::Double},
    {DType::kF32, "F32", 4, c10::ScalarType::Float},
    {DType::kF16, "F16", 2, c10::ScalarType::Half},
    {DType::kBF16, "BF16", 2, c10::ScalarType::BFloat16},
    {DType::kI64, "I64", 8, c10::ScalarType::Long},
    {DType::kI32, "I32", 4, c10::ScalarType::Int},
    {DType::kI16, "I16", 2, c10::ScalarType::Short},
    {DType::kI8, "I8", 1, c10::ScalarType::Char},
    {DType::kU8, "U8", 1, c10::ScalarType::Byte},
    {DType::kBool, "BOOL", 1, c10::ScalarType::Bool},
};

const DTypeRow& dtype_row(DType dtype) {
  for (const DTypeRow& row : kDTypes) {
    if (row.dtype == dtype) return row;
  }
  SEED_FAIL(kInternal) << "DType " << static_cast<int>(dtype) << " is missing from kDTypes";
}

std::string supported_dtype_names() {
  std::string names;
  for (const DTypeRow& row : kDTypes) names += std::string(names.empty() ? "" : " ") + row.name;
  return names;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// A read-only private mapping of a whole file; unmapped on destruction.
class Mapping {
 public:
  // Maps `path`. Files shorter than the header length are rejected here, which
  // also keeps mmap from seeing a zero length.
  static Mapping map_file(const std::string& path) {
    const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      SEED_CHECK(errno != ENOENT, kNotFound) << path << ": no such file";
      SEED_FAIL(kIo) << path << ": cannot open: " << std::strerror(errno);
    }
    struct stat st {};
    SEED_CHECK(::fstat(fd.get(), &st) == 0, kIo)
        << path << ": cannot stat: " << std::strerror(errno);
    SEED_CHECK(S_ISREG(st.st_mode), kIo) << path << ": not a regular file";
    SEED_CHECK(static_cast<uint64_t>(st.st_size) >= kLengthBytes, kCorruption)
        << path << ": file is " << st.st_size
        << " bytes, too short for the 8-byte header length; it is not a safetensors file";
    void* addr = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE,
                        fd.get(), 0);
    SEED_CHECK(addr != MAP_FAILED, kIo) << path << ": cannot mmap: " << std::strerror(errno);
    // The mapping keeps the file alive after the descriptor closes.
    Mapping mapping;
    mapping.bytes_ = static_cast<const uint8_t*>(addr);
    mapping.size_ = static_cast<size_t>(st.st_size);
    return mapping;
  }

  Mapping() = default;
  Mapping(Mapping&& other) noexcept
      : bytes_(std::exchange(other.bytes_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept {
    std::swap(bytes_, other.bytes_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~Mapping() {
    if (bytes_ != nullptr) ::munmap(const_cast<uint8_t*>(bytes_), size_);
  }

  const uint8_t* bytes() const { return bytes_; }
  uint64_t size() const { return size_; }

 private:
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
};

uint64_t read_u64_le(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

// Non-negative JSON integers parse as number_unsigned; negatives, fractions
// and integers past 2^64 (which nlohmann parses as floats) are refused.
std::optional<uint64_t> as_u64(const OrderedJson& value) {
  if (!value.is_number_unsigned()) return std::nullopt;
  return value.get<uint64_t>();
}

// numel * element size, or nullopt if it does not fit in int64.
std::optional<int64_t> checked_nbytes(const std::vector<int64_t>& shape, int64_t elem_size) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t bytes = elem_size;
  for (int64_t dim : shape) {
    if (__builtin_mul_overflow(bytes, dim, &bytes)) return std::nullopt;
  }
  return bytes;
}

TensorInfo parse_tensor(const std::string& path, const std::string& name, const OrderedJson& entry,
                        uint64_t data_size) {
  const std::string where = path + ": tensor '" + name + "'";
  SEED_CHECK(entry.is_object(), kCorruption)
      << where << ": header entry must be an object with dtype, shape and data_offsets";
  TensorInfo info;
  info.name = name;

  const auto dtype = entry.find("dtype");
  SEED_CHECK(dtype != entry.end() && dtype->is_string(), kCorruption)
      << where << ": missing string field 'dtype'";
  const std::string dtype_str = dtype->get<std::string>();
  const DTypeRow* row = nullptr;
  for (const DTypeRow& candidate : kDTypes) {
    if (dtype_str == candidate.name) row = &candidate;
  }
  SEED_CHECK(row != nullptr, kCorruption) << path << ": unsupported dtype '" << dtype_str
                                          << "' for tensor " << name << " (supported: "
                                          << supported_dtype_names() << ")";
  info.dtype = row->dtype;

  const auto shape = entry.find("shape");
  SEED_CHECK(shape != entry.end() && shape->is_array(), kCorruption)
      << where << ": missing array field 'shape'";
  for (const OrderedJson& dim : *shape) {
    const std::optional<uint64_t> value = as_u64(dim);
    SEED_CHECK(value && *value <= uint64_t{std::numeric_limits<int64_t>::max()}, kCorruption)
        << where << ": shape " << shape->dump() << " must hold non-negative integers";
    info.shape.push_back(static_cast<int64_t>(*value));
  }

  const auto offsets = entry.find("data_offsets");
  SEED_CHECK(offsets != entry.end() && offsets->is_array() && offsets->size() == 2, kCorruption)
      << where << ": 'data_offsets' must be [begin, end]";
  const std::optional<uint64_t> begin = as_u64((*offsets)[0]);
  const std::optional<uint64_t> end = as_u64((*offsets)[1]);
  SEED_CHECK(begin && end && *begin <= *end, kCorruption)
      << where << ": data_offsets " << offsets->dump()
      << " must be non-negative integers with begin <= end";
  SEED_CHECK(*end <= data_size, kCorruption)
      << where << ": data_offsets " << offsets->dump() << " point outside the buffer ("
      << data_size << " data bytes); the file may be truncated";
  info.begin = *begin;
  info.end = *end;

  const std::optional<int64_t> nbytes = checked_nbytes(info.shape, row->size);
  SEED_CHECK(nbytes, kCorruption) << where << ": shape " << shape_string(info.shape) << " dtype "
                                  << row->name << " does not fit in 64 bits";
  SEED_CHECK(static_cast<uint64_t>(*nbytes) == info.end - info.begin, kCorruption)
      << where << ": shape " << shape_string(info.shape) << " dtype " << row->name << " needs "
      << *nbytes << " bytes but data_offsets span " << info.end - info.begin;
  return info;
}

// The format's free-form metadata: nothing seed reads, but a file whose
// metadata is not an object of strings is not a safetensors file.
void check_metadata(const std::string& path, const OrderedJson& value) {
  SEED_CHECK(value.is_object(), kCorruption)
      << path << ": " << kMetadataKey << " must be an object of strings";
  for (const auto& [key, item] : value.items()) {
    SEED_CHECK(item.is_string(), kCorruption)
        << path << ": " << kMetadataKey << " entry '" << key << "' must be a string";
  }
}

// Sorts by offset (file order) and refuses tensors that share bytes. Empty
// tensors occupy no bytes and cannot overlap anything.
void sort_and_check_overlap(const std::string& path, std::vector<TensorInfo>& tensors) {
  std::stable_sort(tensors.begin(), tensors.end(),
                   [](const TensorInfo& a, const TensorInfo& b) { return a.begin < b.begin; });
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& tensor : tensors) {
    if (tensor.begin == tensor.end) continue;
    SEED_CHECK(previous == nullptr || previous->end <= tensor.begin, kCorruption)
        << path << ": tensors '" << previous->name << "' [" << previous->begin << ", "
        << previous->end << ") and '" << tensor.name << "' [" << tensor.begin << ", "
        << tensor.end << ") overlap";
    previous = &tensor;
  }
}

}  // namespace

const char* dtype_name(DType dtype) { return dtype_row(dtype).name; }


DType dtype_from_scalar_type(c10::ScalarType scalar_type) {
  for (const DTypeRow& row : kDTypes) {
    if (row.scalar_type == scalar_type) return row.dtype;
  }
  SEED_FAIL(kInvalidArgument) << "safetensors cannot store dtype " << scalar_type
                              << " (supported: " << supported_dtype_names() << ")";
}

c10::ScalarType scalar_type_of_dtype(DType dtype) { return dtype_row(dtype).scalar_type; }

namespace {

// Drops the mapping's whole pages inside [begin, begin + size) from this
// process's memory once a tensor was copied out of them: loading would
// otherwise keep every byte of the file resident beside its copies until
// the file is closed. The mapping is read-only and private, so the pages
// read back from the file if touched again.
void release_pages(const uint8_t* begin, uint64_t size) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + size) / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace

struct SafetensorsFile::Impl {
  std::string path;
  Mapping mapping;
  const uint8_t* data = nullptr;  // the data section, inside `mapping`
  std::vector<TensorInfo> tensors;
  std::unordered_map<std::string, size_t> index;  // name -> position in tensors
};

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->mapping = Mapping::map_file(path);
  const uint8_t* bytes = impl->mapping.bytes();
  const uint64_t file_size = impl->mapping.size();

  const uint64_t header_size = read_u64_le(bytes);
  SEED_CHECK(header_size <= file_size - kLengthBytes, kCorruption)
      << path << ": header length " << header_size << " runs past the end of the file (size "
      << file_size << ")";
  const char* header_text = reinterpret_cast<const char*>(bytes + kLengthBytes);
  OrderedJson header;
  try {
    header = OrderedJson::parse(header_text, header_text + header_size);
  } catch (const OrderedJson::exception& e) {
    SEED_FAIL(kCorruption) << path << ": header is not valid JSON: " << e.what();
  }
  SEED_CHECK(header.is_object(), kCorruption) << path << ": header must be a JSON object";

  impl->data = bytes + kLengthBytes + header_size;
  const uint64_t data_size = file_size - kLengthBytes - header_size;
  for (const auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      check_metadata(path, entry);
    } else {
      impl->tensors.push_back(parse_tensor(path, name, entry, data_size));
    }
  }
  sort_and_check_overlap(path, impl->tensors);
  for (size_t i = 0; i < impl->tensors.size(); ++i) impl->index[impl->tensors[i].name] = i;
  return SafetensorsFile(std::move(impl));
}

SafetensorsFile::SafetensorsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

const std::vector<TensorInfo>& SafetensorsFile::tensors() const { return impl_->tensors; }

bool SafetensorsFile::contains(const std::string& name) const {
  return impl_->index.count(name) != 0;
}

const TensorInfo& SafetensorsFile::info(const std::string& name) const {
  const auto it = impl_->index.find(name);
  SEED_CHECK(it != impl_->index.end(), kNotFound) << impl_->path << ": no tensor '" << name << "'";
  return impl_->tensors[it->second];
}

at::Tensor SafetensorsFile::read(const std::string& name) const {
  const TensorInfo& info = this->info(name);
  at::Tensor tensor =
      torch::empty(info.shape, torch::TensorOptions().dtype(dtype_row(info.dtype).scalar_type));
  // open() proved [begin, end) lies inside the data section and equals nbytes.
  if (info.end > info.begin) {
    std::memcpy(tensor.data_ptr(), impl_->data + info.begin, info.end - info.begin);
    release_pages(impl_->data + info.begin, info.end - info.begin);
  }
  return tensor;
}

const TensorInfo& SafetensorsFile::checked_info(const std::string& name,
                                                const std::vector<int64_t>& expected_shape) const {
  const TensorInfo& info = this->info(name);
  SEED_CHECK(info.shape == expected_shape, kCorruption)
      << impl_->path << ": tensor '" << name << "' has shape " << shape_string(info.shape)
      << " but the model expects " << shape_string(expected_shape)
      << "; does config.json match these weights?";
  return info;
}

at::Tensor SafetensorsFile::read(const std::string& name,
                                 const std::vector<int64_t>& expected_shape) const {
  checked_info(name, expected_shape);
  return read(name);
}

at::Tensor SafetensorsFile::borrow(const std::string& name,
                                   const std::vector<int64_t>& expected_shape) const {
  const TensorInfo& info = checked_info(name, expected_shape);
  const c10::ScalarType type = dtype_row(info.dtype).scalar_type;
  const uint8_t* bytes = impl_->data + info.begin;
  const uint64_t size = info.end - info.begin;
  if (size == 0 || reinterpret_cast<uintptr_t>(bytes) % c10::elementSize(type) != 0) return read(name);
  return torch::from_blob(
      const_cast<uint8_t*>(bytes), info.shape, [bytes, size](void*) { release_pages(bytes, size); },
      torch::TensorOptions().dtype(type));
}

}  // namespace seed::models
