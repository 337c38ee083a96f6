#include "common/config/value_parsers.h"

#include <arpa/inet.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

namespace hostmesh::config {
namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

template <typename T>
std::optional<T> FromChars(std::string_view text) {
  // from_chars takes '-' but not '+'; allow one '+' and never a sign after it.
  if (text.starts_with('+')) {
    text.remove_prefix(1);
    if (text.starts_with('+') || text.starts_with('-')) return std::nullopt;
  }
  if (text.empty()) return std::nullopt;
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A decimal number split at the point: "1.25" -> {"1", "25"}. Both parts are
// digits only and at least one is non-empty.
struct Decimal {
  std::string_view whole;
  std::string_view fraction;
};

// Consumes a decimal number from the front of `text`.
std::optional<Decimal> TakeDecimal(std::string_view& text) {
  size_t i = 0;
  while (i < text.size() && IsDigit(text[i])) ++i;
  Decimal d{text.substr(0, i), {}};
  if (i < text.size() && text[i] == '.') {
    const size_t start = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    d.fraction = text.substr(start, i - start);
  }
  if (d.whole.empty() && d.fraction.empty()) return std::nullopt;
  text.remove_prefix(i);
  return d;
}

// whole * unit, checked for overflow.
std::optional<std::uint64_t> ScaleWhole(std::string_view whole, std::uint64_t unit) {
  std::uint64_t value = 0;
  for (char c : whole) {
    if (__builtin_mul_overflow(value, 10u, &value) ||
        __builtin_add_overflow(value, static_cast<std::uint64_t>(c - '0'), &value)) {
      return std::nullopt;
    }
  }
  if (__builtin_mul_overflow(value, unit, &value)) return std::nullopt;
  return value;
}

struct Unit {
  std::string_view name;
  std::int64_t ns;
};

// Longer names first so "ms" is not read as "m" followed by junk.
constexpr std::array<Unit, 7> kDurationUnits = {{{"ns", 1},
                                                 {"us", 1'000},
                                                 {"\xC2\xB5s", 1'000},  // µs
                                                 {"ms", 1'000'000},
                                                 {"s", 1'000'000'000},
                                                 {"m", 60'000'000'000},
                                                 {"h", 3'600'000'000'000}}};

}  // namespace

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

std::optional<std::int64_t> ParseInt64(std::string_view text) {
  return FromChars<std::int64_t>(text);
}

std::optional<std::uint64_t> ParseUint64(std::string_view text) {
  return FromChars<std::uint64_t>(text);
}

std::optional<double> ParseDouble(std::string_view text) {
  // from_chars also takes "inf" and "nan"; a config value is never meant to be those.
  std::optional<double> value = FromChars<double>(text);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds{0};
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  while (!text.empty()) {
    const std::optional<Decimal> number = TakeDecimal(text);
    if (!number) return std::nullopt;
    const Unit* unit = nullptr;
    for (const Unit& u : kDurationUnits) {
      if (text.starts_with(u.name)) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return std::nullopt;
    text.remove_prefix(unit->name.size());

    const std::optional<std::uint64_t> whole =
        ScaleWhole(number->whole, static_cast<std::uint64_t>(unit->ns));
    if (!whole) return std::nullopt;
    // Each fraction digit is worth a tenth of the previous one; integer steps stay
    // exact down to the nanosecond and drop anything finer.
    std::int64_t fraction = 0;
    std::int64_t step = unit->ns;
    for (char c : number->fraction) {
      step /= 10;
      fraction += (c - '0') * step;
    }
    std::int64_t term = 0;
    if (*whole > static_cast<std::uint64_t>(INT64_MAX) ||
        __builtin_add_overflow(static_cast<std::int64_t>(*whole), fraction, &term) ||
        __builtin_add_overflow(total, term, &total)) {
      return std::nullopt;
    }
  }
  return std::chrono::nanoseconds{total};
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string sign;
  if (ns < 0) {
    sign = "-";
    ns = -ns;
  }
  // Minutes only above 60s: "60s" reads better than "1m" next to limits like 1ms..60s.
  for (auto it = kDurationUnits.rbegin(); it != kDurationUnits.rend(); ++it) {
    if (it->name == "\xC2\xB5s") continue;
    if (it->name == "m" && ns <= 60'000'000'000) continue;
    if (ns % it->ns == 0) return sign + std::to_string(ns / it->ns) + std::string(it->name);
  }
  return sign + std::to_string(ns) + "ns";
}

std::optional<ByteSize> ParseByteSize(std::string_view text) {
  const std::optional<Decimal> number = TakeDecimal(text);
  if (!number) return std::nullopt;
  if (text.size() > 1 && text.front() == ' ') text.remove_prefix(1);  // "64 MiB"
  struct SizeUnit {
    std::string_view name;
    std::uint64_t bytes;
  };
  static constexpr std::array<SizeUnit, 10> kUnits = {{{"", 1},
                                                       {"B", 1},
                                                       {"kB", 1'000},
                                                       {"KiB", 1ull << 10},
                                                       {"MB", 1'000'000},
                                                       {"MiB", 1ull << 20},
                                                       {"GB", 1'000'000'000},
                                                       {"GiB", 1ull << 30},
                                                       {"TB", 1'000'000'000'000},
                                                       {"TiB", 1ull << 40}}};
  std::uint64_t unit = 0;
  for (const SizeUnit& u : kUnits) {
    if (EqualsIgnoreCase(text, u.name)) unit = u.bytes;
  }
  if (unit == 0) return std::nullopt;

  const std::optional<std::uint64_t> whole = ScaleWhole(number->whole, unit);
  if (!whole) return std::nullopt;
  // fraction digits F (k of them) add F * unit / 10^k, which must be whole bytes.
  std::uint64_t fraction = 0;
  std::uint64_t denominator = 1;
  for (char c : number->fraction) {
    if (__builtin_mul_overflow(fraction, 10u, &fraction) ||
        __builtin_add_overflow(fraction, static_cast<std::uint64_t>(c - '0'), &fraction) ||
        __builtin_mul_overflow(denominator, 10u, &denominator)) {
      return std::nullopt;
    }
  }
  std::uint64_t scaled = 0;
  if (__builtin_mul_overflow(fraction, unit, &scaled) || scaled % denominator != 0) {
    return std::nullopt;
  }
  std::uint64_t total = 0;
  if (__builtin_add_overflow(*whole, scaled / denominator, &total)) return std::nullopt;
  return ByteSize{total};
}

std::string FormatByteSize(ByteSize size) {
  static constexpr std::array<std::pair<std::string_view, int>, 4> kBinary = {
      {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}}};
  if (size.bytes != 0) {
    for (const auto& [name, shift] : kBinary) {
      const std::uint64_t unit = 1ull << shift;
      if (size.bytes % unit == 0) return std::to_string(size.bytes / unit) + std::string(name);
    }
  }
  return std::to_string(size.bytes) + "B";
}

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  // inet_pton wants a C string; anything longer than the longest IPv6 text is junk.
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string c_text(text);
  IpAddress address;
  if (inet_pton(AF_INET, c_text.c_str(), address.bytes.data()) == 1) {
    address.family = IpAddress::Family::kV4;
    return address;
  }
  if (inet_pton(AF_INET6, c_text.c_str(), address.bytes.data()) == 1) {
    address.family = IpAddress::Family::kV6;
    return address;
  }
  return std::nullopt;
}

std::string IpAddress::ToString() const {
  std::array<char, INET6_ADDRSTRLEN> text{};
  inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes.data(), text.data(),
            static_cast<socklen_t>(text.size()));
  return text.data();
}

namespace {

// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens.
bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view label = name.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
    start = end + 1;
  }
  return true;
}

bool LooksNumeric(std::string_view host) {
  for (char c : host) {
    if (!IsDigit(c) && c != '.') return false;
  }
  return true;
}

}  // namespace

std::optional<Endpoint> ParseEndpoint(std::string_view text) {
  Endpoint endpoint;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || text.substr(close + 1, 1) != ":") return std::nullopt;
    const std::string_view host = text.substr(1, close - 1);
    const std::optional<IpAddress> address = ParseIpAddress(host);
    if (!address || address->is_v4()) return std::nullopt;
    endpoint.host = std::string(host);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string_view host = text.substr(0, colon);
    // "1.2.3.999" is a typo of an address, not a host name made of digits.
    const bool valid = LooksNumeric(host) ? ParseIpAddress(host).has_value() : IsHostName(host);
    if (!valid) return std::nullopt;
    endpoint.host = std::string(host);
    port_text = text.substr(colon + 1);
  }
  if (port_text.empty() || port_text.size() > 5) return std::nullopt;
  for (char c : port_text) {
    if (!IsDigit(c)) return std::nullopt;
  }
  const std::optional<std::uint64_t> port = ParseUint64(port_text);
  if (!port || *port > 65535) return std::nullopt;
  endpoint.port = static_cast<std::uint16_t>(*port);
  return endpoint;
}

std::string Endpoint::ToString() const {
  const bool bracket = host.find(':') != std::string::npos;
  return (bracket ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace hostmesh::config
