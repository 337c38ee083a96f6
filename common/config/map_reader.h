#pragma once

// Reads one YAML map into a plain struct, key by key, collecting every problem
// (with its key path and line) instead of stopping at the first:
//
//   r.Required("host", &cfg.host);
//   r.Optional("interval", &cfg.interval, Range{1ms, 60s});
//   r.Optional("transport", &cfg.transport, kTransportNames);
//   r.Map("probe", [&](MapReader& m) { m.Optional("timeout", &cfg.timeout); });
//   r.List("nics", [&](MapReader& nic) { ... });
//
// Keys nobody asked for are reported as unknown when the map is finished, so a
// loader must ask for every key it accepts on every run (Optional does that even
// when the key is absent).

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "common/config/config_error.h"
#include "common/config/value_parsers.h"
#include "common/config/value_types.h"
#include "common/config/yaml_document.h"

namespace hostmesh::config {

enum class LowerBound { kInclusive, kExclusive };

// Allowed values, both ends inclusive unless the lower one is marked exclusive
// (for "greater than 0"). Range{1ms, 60s} converts to Range<nanoseconds>.
template <typename T>
struct Range {
  T min;
  T max;
  LowerBound lower = LowerBound::kInclusive;

  constexpr Range(T lo, T hi, LowerBound lower_bound = LowerBound::kInclusive)
      : min(lo), max(hi), lower(lower_bound) {}
  // Implicit on purpose: Range{1ms, 60s} is a Range<milliseconds> until it meets a
  // nanoseconds field. (For U == T the implicit copy constructor wins.)
  template <typename U>
  constexpr Range(const Range<U>& other)  // NOLINT(google-explicit-constructor)
      : min(static_cast<T>(other.min)), max(static_cast<T>(other.max)), lower(other.lower) {}

  constexpr bool Contains(const T& value) const {
    const bool above = lower == LowerBound::kInclusive ? !(value < min) : min < value;
    return above && !(max < value);
  }
};
template <typename A, typename B>
Range(A, B) -> Range<std::common_type_t<A, B>>;
template <typename A, typename B>
Range(A, B, LowerBound) -> Range<std::common_type_t<A, B>>;

// One accepted spelling of an enum value: {"udp", Transport::kUdp}.
template <typename E>
struct EnumName {
  std::string_view name;
  E value;
};

// `text` in double quotes, with quotes, backslashes and control characters
// escaped, for messages that quote what the operator wrote. Text longer than
// kMaxQuotedBytes is cut: "abc..." (5000 bytes).
inline constexpr std::size_t kMaxQuotedBytes = 200;
std::string Quote(std::string_view text);

namespace detail {

// How each value type is spelled in a file: what an error says was expected, how
// text becomes a value, and how a limit is printed.
template <typename T>
struct Codec;

template <>
struct Codec<bool> {
  static constexpr std::string_view kExpected = "true or false";
  static std::optional<bool> Parse(std::string_view text) { return ParseBool(text); }
};
template <>
struct Codec<std::string> {
  static constexpr std::string_view kExpected = "a non-empty string";
  static std::optional<std::string> Parse(std::string_view text) {
    if (text.empty()) return std::nullopt;
    return std::string(text);
  }
};
template <>
struct Codec<double> {
  static constexpr std::string_view kExpected = "a number";
  static std::optional<double> Parse(std::string_view text) { return ParseDouble(text); }
  static std::string Format(double value);
};
template <>
struct Codec<std::chrono::nanoseconds> {
  static constexpr std::string_view kExpected = "a duration such as 250us, 100ms, 1.5s, 5m or 1h";
  static std::optional<std::chrono::nanoseconds> Parse(std::string_view text) {
    return ParseDuration(text);
  }
  static std::string Format(std::chrono::nanoseconds value) { return FormatDuration(value); }
};
template <>
struct Codec<ByteSize> {
  static constexpr std::string_view kExpected = "a size such as 1000, 512KiB, 64MiB or 1GB";
  static std::optional<ByteSize> Parse(std::string_view text) { return ParseByteSize(text); }
  static std::string Format(ByteSize value) { return FormatByteSize(value); }
};
template <>
struct Codec<Endpoint> {
  static constexpr std::string_view kExpected =
      "host:port such as 10.0.0.1:50051, analyzer.example:50051 or [fd00::1]:50051";
  static std::optional<Endpoint> Parse(std::string_view text) { return ParseEndpoint(text); }
};
template <>
struct Codec<IpAddress> {
  static constexpr std::string_view kExpected = "an IPv4 or IPv6 address";
  static std::optional<IpAddress> Parse(std::string_view text) { return ParseIpAddress(text); }
};

template <typename T>
concept Integer = std::integral<T> && !std::same_as<T, bool>;

template <Integer T>
struct Codec<T> {
  static constexpr std::string_view kExpected = "an integer";
  // Signed and unsigned values are carried in the widest type of their kind.
  using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
  static std::optional<Wide> ParseWide(std::string_view text) {
    if constexpr (std::is_signed_v<T>) {
      return ParseInt64(text);
    } else {
      return ParseUint64(text);
    }
  }
  static std::string Format(Wide value) { return std::to_string(value); }
};

// Types whose limits can be printed in a message, hence the ones a Range applies to.
template <typename T>
concept Rangeable = Integer<T> || requires(const T& v) {
  Codec<T>::Format(v);
};

// "must be between 1ms and 60s" / "must be greater than 0 and at most 1000".
std::string DescribeRange(const std::string& min, const std::string& max, LowerBound lower);
// "-12", "+3", "99999999999999999999": an integer, if perhaps one that does not fit.
bool LooksLikeInteger(std::string_view text);

}  // namespace detail

class MapReader {
 public:
  using ReadFn = std::function<void(MapReader&)>;

  // A reader over `node` (a map, or null for an empty one) whose keys are
  // reported under `path`; `anchor` locates the map itself, for missing keys.
  // ReadYaml builds the root reader; Map and List build the nested ones.
  MapReader(const YamlNode& node, std::string path, const YAML::Mark& anchor, IssueSink* sink);

  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  // Scalars: bool, integers, double, std::string (non-empty), nanoseconds,
  // ByteSize, Endpoint, IpAddress, std::vector of any of those (a YAML list),
  // and enums given a table of names. Each returns true when *out was set.
  // Optional leaves *out (the default) alone when the key is absent.
  template <typename T>
  bool Required(std::string_view key, T* out) {
    return Read(key, out, static_cast<const Range<T>*>(nullptr), true);
  }
  template <typename T>
  bool Required(std::string_view key, T* out, std::type_identity_t<Range<T>> range) {
    static_assert(detail::Rangeable<T>, "a Range applies to numbers, durations and sizes");
    return Read(key, out, &range, true);
  }
  template <typename E>
  bool Required(std::string_view key, E* out,
                std::type_identity_t<std::span<const EnumName<E>>> names) {
    return ReadEnum(key, out, names, true);
  }
  template <typename T>
  bool Optional(std::string_view key, T* out) {
    return Read(key, out, static_cast<const Range<T>*>(nullptr), false);
  }
  template <typename T>
  bool Optional(std::string_view key, T* out, std::type_identity_t<Range<T>> range) {
    static_assert(detail::Rangeable<T>, "a Range applies to numbers, durations and sizes");
    return Read(key, out, &range, false);
  }
  template <typename E>
  bool Optional(std::string_view key, E* out,
                std::type_identity_t<std::span<const EnumName<E>>> names) {
    return ReadEnum(key, out, names, false);
  }

  // A nested map. An absent or empty (null) map means {}: its defaults apply.
  // Returns false when the key held something else (reported) or a required map
  // is missing.
  bool Map(std::string_view key, const ReadFn& read) { return ReadMap(key, read, false); }
  bool RequiredMap(std::string_view key, const ReadFn& read) { return ReadMap(key, read, true); }
  // A list of maps; `read_item` runs once per map item with a reader for
  // "key[i]". Returns false when the key held something other than a list
  // (reported) or a required list is missing; bad items do not count.
  bool List(std::string_view key, const ReadFn& read_item) {
    return ReadList(key, read_item, false);
  }
  bool RequiredList(std::string_view key, const ReadFn& read_item) {
    return ReadList(key, read_item, true);
  }

  // Whether the key is present (even with a bad value). Counts as asking for it.
  bool Has(std::string_view key);
  // Reports a problem found by a cross-field check at the key's value, or at
  // this map when the key is absent.
  void Fail(std::string_view key, std::string message);
  // Reports a problem with this map as a whole.
  void Fail(std::string message);

  // "nics[2].rail" for key "rail" of the reader at "nics[2]".
  std::string PathOf(std::string_view key) const;
  const std::string& path() const { return path_; }

  // Reports keys nobody asked for (with a "did you mean" when one is close).
  // ReadYaml, Map and List call this once `read` returns.
  void Finish();

 private:
  struct Entry {
    std::string_view key;
    YamlNode key_node;
    YamlNode value;
  };

  // Finds `key`, remembering it as known; reports it as missing if required.
  const Entry* Lookup(std::string_view key, bool required);
  // The text of a scalar value, or nullopt after reporting what was expected.
  std::optional<std::string> ScalarText(const YamlNode& value, const YamlNode& near,
                                        const std::string& path, std::string_view expected);
  void Report(const YamlNode& value, const YamlNode& near, std::string path, std::string message);
  void ReportAt(const YAML::Mark& mark, std::string path, std::string message);
  bool ReadMap(std::string_view key, const ReadFn& read, bool required);
  bool ReadList(std::string_view key, const ReadFn& read_item, bool required);

  template <typename T>
  bool Read(std::string_view key, T* out, const Range<T>* range, bool required) {
    const Entry* entry = Lookup(key, required);
    if (entry == nullptr) return false;
    return Decode(entry->value, entry->key_node, PathOf(key), out, range);
  }

  template <typename T>
  bool Read(std::string_view key, std::vector<T>* out, const Range<std::vector<T>>*,
            bool required) {
    const Entry* entry = Lookup(key, required);
    if (entry == nullptr) return false;
    const std::string path = PathOf(key);
    if (entry->value.IsNull()) {
      out->clear();
      return true;
    }
    if (!entry->value.IsSequence()) {
      Report(entry->value, entry->key_node, path, "expected a list, got " + Kind(entry->value));
      return false;
    }
    std::vector<T> items;
    bool ok = true;
    size_t index = 0;
    for (const YamlNode& node : entry->value.Items()) {
      T item{};
      if (Decode(node, node, path + "[" + std::to_string(index++) + "]", &item,
                 static_cast<const Range<T>*>(nullptr))) {
        items.push_back(std::move(item));
      } else {
        ok = false;
      }
    }
    if (ok) *out = std::move(items);
    return ok;
  }

  template <typename T>
  bool Decode(const YamlNode& value, const YamlNode& near, const std::string& path, T* out,
              const Range<T>* range) {
    using Codec = detail::Codec<T>;
    const std::optional<std::string> text = ScalarText(value, near, path, Codec::kExpected);
    if (!text) return false;
    if constexpr (detail::Integer<T>) {
      using Wide = typename Codec::Wide;
      Range<Wide> limits{std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
      if (range != nullptr) limits = Range<Wide>(*range);
      const std::optional<Wide> parsed = Codec::ParseWide(*text);
      if (!parsed && !detail::LooksLikeInteger(*text)) {
        Report(value, near, path,
               "expected " + std::string(Codec::kExpected) + ", got " + Quote(*text));
        return false;
      }
      if (!parsed || !limits.Contains(*parsed)) {
        Report(value, near, path,
               detail::DescribeRange(Codec::Format(limits.min), Codec::Format(limits.max),
                                     limits.lower) +
                   ", got " + Quote(*text));
        return false;
      }
      *out = static_cast<T>(*parsed);
    } else {
      std::optional<T> parsed = Codec::Parse(*text);
      if (!parsed) {
        Report(value, near, path,
               "expected " + std::string(Codec::kExpected) + ", got " + Quote(*text));
        return false;
      }
      if constexpr (detail::Rangeable<T>) {
        if (range != nullptr && !range->Contains(*parsed)) {
          Report(value, near, path,
                 detail::DescribeRange(Codec::Format(range->min), Codec::Format(range->max),
                                       range->lower) +
                     ", got " + Quote(*text));
          return false;
        }
      }
      *out = std::move(*parsed);
    }
    return true;
  }

  template <typename E>
  bool ReadEnum(std::string_view key, E* out, std::span<const EnumName<E>> names, bool required) {
    const Entry* entry = Lookup(key, required);
    if (entry == nullptr) return false;
    std::vector<std::string> spelled;
    for (const EnumName<E>& n : names) spelled.emplace_back(n.name);
    const std::string path = PathOf(key);
    const std::optional<std::string> text =
        ScalarText(entry->value, entry->key_node, path, DescribeChoices(spelled));
    if (!text) return false;
    for (const EnumName<E>& n : names) {
      if (n.name == *text) {
        *out = n.value;
        return true;
      }
    }
    Report(entry->value, entry->key_node, path, UnknownChoice(*text, spelled));
    return false;
  }

  static std::string Kind(const YamlNode& node);
  // `one of "verbs", "udp", "auto"`.
  static std::string DescribeChoices(const std::vector<std::string>& choices);
  static std::string UnknownChoice(std::string_view text, const std::vector<std::string>& choices);

  YamlNode node_;
  std::string path_;
  YAML::Mark anchor_;
  IssueSink* sink_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string_view, std::size_t> index_;  // key -> entries_ index
  // Every key a loader asked for, present or not: the vocabulary for suggestions.
  std::vector<std::string> known_;
  bool finished_ = false;
};

}  // namespace hostmesh::config
