#include "common/base/proc_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace hostmesh {

std::optional<ProcStats> ParseProcStat(std::string_view stat, long ticks_per_second,
                                       long page_size) {
  // The command name (field 2) may hold spaces and parentheses: fields are
  // counted from the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0 || page_size <= 0) {
    return std::nullopt;
  }
  std::string_view rest = stat.substr(close + 1);
  long long fields[25] = {};
  int field = 2;  // the last one consumed
  while (field < 24) {
    const std::size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(start);
    const std::size_t end = std::min(rest.find(' '), rest.size());
    ++field;
    if (field >= 14) {
      const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + end, fields[field]);
      if (ec != std::errc{}) return std::nullopt;
    }
    rest.remove_prefix(end);
  }
  ProcStats out;
  out.cpu_seconds =
      static_cast<double>(fields[14] + fields[15]) / static_cast<double>(ticks_per_second);
  out.resident_bytes = static_cast<double>(fields[24]) * static_cast<double>(page_size);
  return out;
}

std::optional<ProcStats> ReadSelfProcStats() {
  std::ifstream in("/proc/self/stat");
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseProcStat(text, ::sysconf(_SC_CLK_TCK), ::sysconf(_SC_PAGESIZE));
}

std::optional<std::uint64_t> OpenFilesLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::nullopt;
  return limit.rlim_cur;
}

std::optional<std::uint64_t> CountOpenFiles() {
  std::error_code ec;
  std::uint64_t open = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++open;
  }
  if (ec) return std::nullopt;
  // The iterator's own descriptor was one of them.
  return open > 0 ? open - 1 : 0;
}

}  // namespace hostmesh
