// seed::Error: the one exception type of the project.
//
// Errors are exceptions (libtorch, nlohmann-json and Boost throw already, and
// constructors that load weights cannot return a status). Each carries a kind,
// leveldb-style, and a message that says what failed and how to fix it.
// Expected outcomes (a rejected draft, a full cache, an unparsable answer)
// are values, never exceptions. Errors are caught only in main, in each rank's
// service loop and in the HTTP handler.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace seed {

enum class ErrorKind {
  kInvalidArgument,  // the caller passed something malformed (flag, field)
  kNotFound,         // a file, tensor or field that must exist does not
  kCorruption,       // a file exists but its bytes are inconsistent
  kIo,               // the operating system refused a read or write
  kOutOfRange,       // a length or index past a limit (context, vocab)
  kInternal,         // a broken invariant: a bug in seed
  kUnavailable,      // a peer (a rank, a remote drafter) died or stopped answering
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
// Builds the message lazily so that a passing check costs one branch.
class ErrorBuilder {
 public:
  explicit ErrorBuilder(ErrorKind kind) : kind_(kind) {}
  template <typename T>
  ErrorBuilder& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  [[noreturn]] void raise() const { throw Error(kind_, stream_.str()); }

 private:
  ErrorKind kind_;
  std::ostringstream stream_;
};

struct Raiser {
  [[noreturn]] void operator&(const ErrorBuilder& builder) const { builder.raise(); }
};
}  // namespace detail

}  // namespace seed

// SEED_CHECK(cond, kind) << "what failed; the fix";
#define SEED_CHECK(cond, kind) \
  if (cond) {                  \
  } else                       \
    ::seed::detail::Raiser() & ::seed::detail::ErrorBuilder(::seed::ErrorKind::kind)

// SEED_FAIL(kind) << "message"; raises unconditionally.
#define SEED_FAIL(kind) ::seed::detail::Raiser() & ::seed::detail::ErrorBuilder(::seed::ErrorKind::kind)
