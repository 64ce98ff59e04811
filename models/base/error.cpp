#include "models/base/error.h"

namespace seed {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kCorruption: return "corruption";
    case ErrorKind::kIo: return "I/O error";
    case ErrorKind::kOutOfRange: return "out of range";
    case ErrorKind::kInternal: return "internal error";
    case ErrorKind::kUnavailable: return "unavailable";
  }
  return "unknown error";
}

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(message), kind_(kind) {}

}  // namespace seed
