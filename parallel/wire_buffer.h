// The bytes of one wire message (parallel/wire.h gives the format): a
// Writer appends values and arrays, a Reader takes them back front to back
// and names the sender, the message and the field in every error.
//
// Internal to seed_wire. Not thread-safe: one per message being encoded or
// decoded.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "models/base/error.h"

// The format is little-endian and arrays are copied as they lie in memory.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the wire format assumes a little-endian host");

namespace seed::parallel::wire {

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_arithmetic_v<T>);
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
  }
  void put_count(size_t count, const char* field) {
    SEED_CHECK(count <= std::numeric_limits<uint32_t>::max(), kInvalidArgument)
        << "wire: " << field << " has " << count << " elements, more than a message can carry";
    put(static_cast<uint32_t>(count));
  }
  template <typename T>
  void put_raw(const T* data, size_t count) {
    const auto* p = reinterpret_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + count * sizeof(T));
  }
  template <typename T>
  void put_array(const std::vector<T>& values, const char* field) {
    put_count(values.size(), field);
    put_raw(values.data(), values.size());
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads a buffer front to back; every shortfall names the sender, the
// message and the field being read.
class Reader {
 public:
  Reader(const std::vector<uint8_t>& bytes, int sender) : bytes_(bytes), sender_(sender) {}

  void set_message(const char* name) { message_ = name; }
  template <typename T>
  T get(const char* field) {
    T value;
    std::memcpy(&value, take(sizeof(T), field), sizeof(T));
    return value;
  }
  template <typename T>
  void get_raw(T* out, size_t count, const char* field) {
    if (count > 0) std::memcpy(out, take(count * sizeof(T), field), count * sizeof(T));
  }
  template <typename T>
  std::vector<T> get_array(const char* field) {
    const uint32_t count = get<uint32_t>(field);
    need(uint64_t{count} * sizeof(T), field);  // before allocating what a corrupt count claims
    std::vector<T> values(count);
    get_raw(values.data(), count, field);
    return values;
  }
  void finish() {
    if (position_ != bytes_.size()) {
      detail::Raiser() & fail() << bytes_.size() - position_ << " bytes follow the end of the message";
    }
  }
  // An error to complete and raise: detail::Raiser() & r.fail() << "what";
  detail::ErrorBuilder fail() const {
    detail::ErrorBuilder builder(ErrorKind::kCorruption);
    builder << "malformed " << message_ << " message from rank " << sender_ << ": ";
    return builder;
  }
  // Throws unless `size` more bytes are left for `field`.
  void need(uint64_t size, const char* field) {
    if (size > bytes_.size() - position_) {
      detail::Raiser() & fail() << "truncated at byte " << position_ << " reading " << field << " (" << size
                                << " bytes needed, " << bytes_.size() - position_ << " left)";
    }
  }

 private:
  const uint8_t* take(size_t size, const char* field) {
    need(size, field);
    const uint8_t* p = bytes_.data() + position_;
    position_ += size;
    return p;
  }

  const std::vector<uint8_t>& bytes_;
  int sender_;
  const char* message_ = "wire";
  size_t position_ = 0;
};

}  // namespace seed::parallel::wire
