#include "agent/protect/pressure_text.h"

#include <charconv>
#include <cstdlib>

namespace hostmesh::agent::protect {
namespace {

// Splits off the next line (without its '\n').
std::string_view NextLine(std::string_view& text) {
  const std::size_t end = text.find('\n');
  std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  return line;
}

// The value after "key=" in a PSI line; nullopt when absent or not a number.
std::optional<double> Field(std::string_view line, std::string_view key) {
  std::size_t at = 0;
  while ((at = line.find(key, at)) != std::string_view::npos) {
    const bool starts_word = at == 0 || line[at - 1] == ' ';
    if (starts_word && at + key.size() < line.size() && line[at + key.size()] == '=') {
      const std::size_t from = at + key.size() + 1;
      const std::size_t space = line.find(' ', from);
      const std::string value(
          line.substr(from, space == std::string_view::npos ? space : space - from));
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || !(v >= 0.0 && v <= 100.0)) return std::nullopt;
      return v;
    }
    at += key.size();
  }
  return std::nullopt;
}

bool ParseU64(std::string_view text, std::uint64_t* out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

}  // namespace

std::optional<PsiLine> ParsePsi(std::string_view text) {
  std::optional<PsiLine> out;
  while (!text.empty()) {
    const std::string_view line = NextLine(text);
    const bool some = line.starts_with("some ");
    if (!some && !line.starts_with("full ")) continue;
    const std::optional<double> avg10 = Field(line, "avg10");
    if (!avg10) return std::nullopt;  // a known line that does not parse: not this format
    if (!out) out.emplace();
    (some ? out->some_avg10 : out->full_avg10) = *avg10;
  }
  return out;
}

std::optional<CpuStat> ParseCpuStat(std::string_view text) {
  CpuStat stat;
  bool have_time = false;
  while (!text.empty()) {
    const std::string_view line = NextLine(text);
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, space);
    std::uint64_t value = 0;
    if (!ParseU64(line.substr(space + 1), &value)) continue;
    if (key == "nr_periods") stat.nr_periods = value;
    if (key == "nr_throttled") stat.nr_throttled = value;
    if (key == "throttled_usec") stat.throttled_ns = value * 1000, have_time = true;
    if (key == "throttled_time") stat.throttled_ns = value, have_time = true;
  }
  if (!have_time) return std::nullopt;
  return stat;
}

namespace {

// The kernel escapes a space in a mount point as \040.
std::string Unescape(std::string_view raw) {
  std::string point;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw.substr(i, 4) == "\\040") {
      point += ' ';
      i += 3;
    } else {
      point += raw[i];
    }
  }
  return point;
}

// The mount point of the first line of /proc/self/mounts whose type is
// `type` and, when `option` is not empty, whose options list it.
std::string FindMount(std::string_view mounts, std::string_view type, std::string_view option) {
  while (!mounts.empty()) {
    const std::string_view line = NextLine(mounts);
    // device mountpoint type options dump pass
    std::string_view fields[4];
    std::string_view rest = line;
    std::size_t n = 0;
    for (; n < 4 && !rest.empty(); ++n) {
      const std::size_t space = rest.find(' ');
      fields[n] = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    }
    if (n < 4 || fields[2] != type) continue;
    if (option.empty()) return Unescape(fields[1]);
    std::string_view options = fields[3];
    while (!options.empty()) {
      const std::size_t comma = options.find(',');
      if (options.substr(0, comma) == option) return Unescape(fields[1]);
      options = comma == std::string_view::npos ? std::string_view{} : options.substr(comma + 1);
    }
  }
  return {};
}

}  // namespace

std::string ParseCpuMount(std::string_view mounts) {
  return FindMount(mounts, "cgroup", "cpu");
}

std::string ParseCgroup2Mount(std::string_view mounts) {
  return FindMount(mounts, "cgroup2", "");
}

std::optional<std::uint64_t> ParseSchedstatWait(std::string_view text) {
  const std::size_t first = text.find(' ');
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(first + 1);
  const std::size_t second = rest.find(' ');
  if (second == std::string_view::npos) return std::nullopt;
  std::uint64_t wait = 0;
  if (!ParseU64(rest.substr(0, second), &wait)) return std::nullopt;
  return wait;
}

CgroupPaths ParseSelfCgroup(std::string_view text) {
  CgroupPaths out;
  while (!text.empty()) {
    const std::string_view line = NextLine(text);
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty()) {
      out.unified = std::string(path);
      continue;
    }
    // "cpu", "cpu,cpuacct" or "cpuacct,cpu": the cpu controller's hierarchy.
    std::string_view rest = controllers;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (rest.substr(0, comma) == "cpu") out.cpu_v1 = std::string(path);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  return out;
}

}  // namespace hostmesh::agent::protect
