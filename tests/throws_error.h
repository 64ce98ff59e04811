// throws_error: the assertion every error-path test makes.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/base/error.h"

namespace seed::testing {

// Passes if `fn` throws a seed::Error of `kind` whose message contains each
// of `needles` (file names, tensor names, fields).
//   EXPECT_TRUE(throws_error([&] { open(path); }, ErrorKind::kCorruption, {path, "weight"}));
template <typename Fn>
::testing::AssertionResult throws_error(Fn&& fn, ErrorKind kind, const std::vector<std::string>& needles) {
  try {
    fn();
  } catch (const Error& e) {
    const std::string message = e.what();
    if (e.kind() != kind) {
      return ::testing::AssertionFailure() << "kind is " << error_kind_name(e.kind()) << ", expected "
                                           << error_kind_name(kind) << ": " << message;
    }
    for (const std::string& needle : needles) {
      if (message.find(needle) == std::string::npos) {
        return ::testing::AssertionFailure() << "message lacks '" << needle << "': " << message;
      }
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no seed::Error was thrown";
}

}  // namespace seed::testing
