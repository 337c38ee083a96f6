#pragma once

// The process's own cost, read from /proc/self at scrape time: the agent's
// overhead is a product promise (DESIGN 1: beat 0.8% CPU and 7.7 MB RSS), and
// the analyzer's shows on the operators' dashboards beside it.

#include <cstdint>
#include <optional>
#include <string_view>

namespace hostmesh {

struct ProcStats {
  double cpu_seconds = 0;  // user + system
  double resident_bytes = 0;
};

// Parses the text of /proc/self/stat (fields 14, 15 utime/stime in clock
// ticks, 24 rss in pages); nullopt when malformed.
std::optional<ProcStats> ParseProcStat(std::string_view stat, long ticks_per_second,
                                       long page_size);

// Reads /proc/self/stat; nullopt when it cannot.
std::optional<ProcStats> ReadSelfProcStats();

// Open descriptors (entries of /proc/self/fd) and the soft RLIMIT_NOFILE: an
// analyzer holds one per agent, and gRPC 1.51 stops accepting for good when
// it runs out (analyzer/ingest/grpc_listener_watch.h). Counting needs a
// descriptor of its own: nullopt when none is left.
std::optional<std::uint64_t> CountOpenFiles();
std::optional<std::uint64_t> OpenFilesLimit();

}  // namespace hostmesh
