// Rational arithmetic: every operation is done exactly in 128 bits, reduced by
// the gcd, and only then checked against the int64 range. Products of two
// int64 values always fit in 128 bits, and so do the sums a*d + c*b used by
// add/sub (each term < 2^126), so no intermediate can overflow.
#include "tasks/rational.h"

#include <cstdint>
#include <cstdlib>
#include <limits>

#include "models/base/error.h"

namespace seed::tasks {
namespace {

using Wide = __int128;

constexpr Wide kInt64Max = std::numeric_limits<int64_t>::max();

Wide wide_abs(Wide x) { return x < 0 ? -x : x; }

Wide wide_gcd(Wide a, Wide b) {
  a = wide_abs(a);
  b = wide_abs(b);
  while (b != 0) {
    const Wide t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Normalises num/den (den != 0) into `out`; kOverflow when either field leaves
// [-INT64_MAX, INT64_MAX]. INT64_MIN is excluded so that negation of any
// stored numerator is always representable.
ArithmeticStatus normalise(Wide num, Wide den, int64_t* out_num, int64_t* out_den) {
  if (den == 0) return ArithmeticStatus::kDivisionByZero;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  const Wide g = wide_gcd(num, den);  // den > 0, so g >= 1
  num /= g;
  den /= g;
  if (wide_abs(num) > kInt64Max || den > kInt64Max) return ArithmeticStatus::kOverflow;
  *out_num = static_cast<int64_t>(num);
  *out_den = static_cast<int64_t>(den);
  return ArithmeticStatus::kOk;
}

RationalResult make_result(Wide num, Wide den) {
  RationalResult result;
  int64_t n = 0;
  int64_t d = 1;
  result.status = normalise(num, den, &n, &d);
  if (result.ok()) result.value = Rational::of(n, d);
  return result;
}

// Parses non-empty decimal digits into [0, INT64_MAX]; false otherwise.
bool parse_digits(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  Wide value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
    if (value > kInt64Max) return false;
  }
  *out = static_cast<int64_t>(value);
  return true;
}

}  // namespace

Rational Rational::of(int64_t num, int64_t den) {
  SEED_CHECK(den != 0, kInvalidArgument) << "Rational::of: zero denominator (" << num << "/0)";
  int64_t n = 0;
  int64_t d = 1;
  const ArithmeticStatus status = normalise(num, den, &n, &d);
  SEED_CHECK(status == ArithmeticStatus::kOk, kInvalidArgument)
      << "Rational::of: " << num << "/" << den << " does not fit in int64 once normalised";
  Rational r;
  r.num_ = n;
  r.den_ = d;
  return r;
}

std::string Rational::to_string() const {
  if (den_ == 1) return std::to_string(num_);
  return std::to_string(num_) + "/" + std::to_string(den_);
}

std::optional<Rational> Rational::parse(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  const size_t slash = text.find('/');
  int64_t num = 0;
  int64_t den = 1;
  if (!parse_digits(text.substr(0, slash), &num)) return std::nullopt;
  if (slash != std::string_view::npos) {
    if (!parse_digits(text.substr(slash + 1), &den) || den == 0) return std::nullopt;
  }
  return Rational::of(negative ? -num : num, den);
}

bool operator<(const Rational& a, const Rational& b) {
  return Wide(a.num_) * b.den_ < Wide(b.num_) * a.den_;
}

RationalResult add(const Rational& a, const Rational& b) {
  return make_result(Wide(a.num()) * b.den() + Wide(b.num()) * a.den(), Wide(a.den()) * b.den());
}

RationalResult sub(const Rational& a, const Rational& b) {
  return make_result(Wide(a.num()) * b.den() - Wide(b.num()) * a.den(), Wide(a.den()) * b.den());
}

RationalResult mul(const Rational& a, const Rational& b) {
  return make_result(Wide(a.num()) * b.num(), Wide(a.den()) * b.den());
}

RationalResult div(const Rational& a, const Rational& b) {
  if (b.is_zero()) return RationalResult{ArithmeticStatus::kDivisionByZero, Rational()};
  return make_result(Wide(a.num()) * b.den(), Wide(a.den()) * b.num());
}

}  // namespace seed::tasks
