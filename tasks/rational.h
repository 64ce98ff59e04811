// Rational: exact fractions on int64, for the Game of 24.
//
// The Game of 24 is decided in exact arithmetic: 8 / (3 - 8 / 3) = 24 holds
// only if 8 / 3 is not rounded. Floating point gets such puzzles wrong, so the
// solver, the step enumerator and the answer checker all compute here.
//
// A Rational is always normalised: the denominator is positive, numerator and
// denominator are coprime, and zero is 0/1. So two equal values have equal
// fields, and `==` is a field comparison.
//
// Arithmetic never throws and never overflows silently: add/sub/mul/div
// compute exactly in 128 bits and return a RationalResult whose status says
// kDivisionByZero or kOverflow (the result does not fit in int64) instead of a
// value. A division by zero inside a model's answer is an expected outcome
// (style rule 5), not an error. Comparisons are exact and cannot overflow.
//
// Value type, thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace seed::tasks {

class Rational {
 public:
  // Zero.
  Rational() = default;
  // An integer. Implicit on purpose: `Rational r = 24;` reads naturally.
  Rational(int64_t value) : num_(value) {}  // NOLINT(google-explicit-constructor)

  // num/den normalised. Throws kInvalidArgument when den == 0 or when the
  // normalised value does not fit (only INT64_MIN can cause that).
  static Rational of(int64_t num, int64_t den);

  int64_t num() const { return num_; }
  int64_t den() const { return den_; }
  bool is_integer() const { return den_ == 1; }
  bool is_zero() const { return num_ == 0; }

  // "24", "-3", "8/3", "-1/2": the form Game-of-24 steps print.
  std::string to_string() const;

  // Parses the to_string form: an optional '-', digits, optionally '/' and
  // positive digits ("8/3", "-1/2", "6/2" which normalises to 3). No spaces.
  // Returns nullopt on anything else, a zero denominator or overflow.
  static std::optional<Rational> parse(std::string_view text);

  friend bool operator==(const Rational& a, const Rational& b) {
    return a.num_ == b.num_ && a.den_ == b.den_;
  }
  friend bool operator!=(const Rational& a, const Rational& b) { return !(a == b); }
  // Exact order (cross products in 128 bits).
  friend bool operator<(const Rational& a, const Rational& b);
  friend bool operator>(const Rational& a, const Rational& b) { return b < a; }
  friend bool operator<=(const Rational& a, const Rational& b) { return !(b < a); }
  friend bool operator>=(const Rational& a, const Rational& b) { return !(a < b); }

 private:
  int64_t num_ = 0;
  int64_t den_ = 1;  // > 0 always
};

enum class ArithmeticStatus {
  kOk,
  kDivisionByZero,  // the divisor was zero
  kOverflow,        // the exact result needs more than int64 numerator/denominator
};

// The outcome of one operation: `value` is meaningful only when ok().
struct RationalResult {
  ArithmeticStatus status = ArithmeticStatus::kOk;
  Rational value;

  bool ok() const { return status == ArithmeticStatus::kOk; }
};

RationalResult add(const Rational& a, const Rational& b);
RationalResult sub(const Rational& a, const Rational& b);
RationalResult mul(const Rational& a, const Rational& b);
RationalResult div(const Rational& a, const Rational& b);

}  // namespace seed::tasks
