#include "agent/recorder/local_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <vector>

#include "agent/recorder/flight_entry.h"

namespace hostmesh::agent::recorder {
namespace {

constexpr std::string_view kPrefix = "flight-";
constexpr std::string_view kSuffix = ".jsonl";

// "2024-01-01T00:00:00.123456789Z", or the number when out of gmtime's reach.
std::string Rfc3339(std::int64_t ns) {
  const std::int64_t secs = ns >= 0 ? ns / 1'000'000'000 : (ns + 1) / 1'000'000'000 - 1;
  const std::int64_t frac = ns - secs * 1'000'000'000;
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return std::to_string(ns);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[96];
  std::snprintf(out, sizeof out, "%.*s.%09lldZ", static_cast<int>(n), buf,
                static_cast<long long>(frac));
  return out;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool IsCaptureFile(const std::string& name) {
  return name.starts_with(kPrefix) && name.ends_with(kSuffix);
}

void Prune(const std::filesystem::path& dir, std::size_t keep) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (IsCaptureFile(name)) names.push_back(name);
  }
  if (names.size() <= keep) return;
  std::sort(names.begin(), names.end());  // by time: the names say it
  for (std::size_t i = 0; i + keep < names.size(); ++i) std::filesystem::remove(dir / names[i], ec);
}

}  // namespace

std::string FlightEventJson(const v1::FlightEvent& e) {
  nlohmann::json j;
  j["time"] = Rfc3339(e.time_ns());
  j["time_ns"] = e.time_ns();
  j["kind"] = FlightKindName(static_cast<FlightKind>(e.kind()));
  j["nic"] = e.nic();
  if (e.kind() == v1::FlightEvent::KIND_PROBE || e.kind() == v1::FlightEvent::KIND_TRACE) {
    j["peer_nic"] = e.peer_nic();
    j["port"] = e.port();
  }
  j["value_ns"] = e.value_ns();
  j["value"] = e.value();
  j["flags"] = e.flags();
  if (!e.text().empty()) j["text"] = e.text();
  // Text cut by bytes may end mid-character in a malformed line: replaced, not thrown.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string CaptureFileName(WallTime at) {
  const std::int64_t ns = at.time_since_epoch().count();
  std::string stamp = Rfc3339(ns);  // 2024-01-01T00:00:00.123456789Z
  // Compact and without ':' (awkward in file names): 20240101T000000.123Z.
  std::string out;
  for (std::size_t i = 0; i < stamp.size() && stamp[i] != '.'; ++i) {
    if (stamp[i] != '-' && stamp[i] != ':') out += stamp[i];
  }
  const std::size_t dot = stamp.find('.');
  if (dot != std::string::npos) out += stamp.substr(dot, 4);
  return std::string(kPrefix) + out + "Z" + std::string(kSuffix);
}

std::optional<std::filesystem::path> WriteLocalCapture(const v1::FlightRecord& record,
                                                       const std::filesystem::path& dir,
                                                       WallTime at, std::size_t keep,
                                                       std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir.string() + ": " + ec.message();
    return std::nullopt;
  }
  const std::filesystem::path final_path = dir / CaptureFileName(at);
  const std::filesystem::path tmp = dir / ("." + final_path.filename().string() + ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    *error = "cannot create " + tmp.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string out;
  bool ok = true;
  for (const v1::FlightEvent& event : record.events()) {
    out += FlightEventJson(event);
    out += '\n';
    if (out.size() >= 64 * 1024) {
      ok = ok && WriteAll(fd, out);
      out.clear();
    }
  }
  ok = ok && WriteAll(fd, out);
  const int saved = errno;
  // Durable before it is visible under its name: a crash leaves the old set.
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    *error = "writing " + tmp.string() + ": " + std::strerror(saved != 0 ? saved : errno);
    std::filesystem::remove(tmp, ec);
    return std::nullopt;
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) {
    *error = "cannot rename " + tmp.string() + " to " + final_path.string() + ": " + ec.message();
    std::filesystem::remove(tmp, ec);
    return std::nullopt;
  }
  Prune(dir, keep);
  return final_path;
}

}  // namespace hostmesh::agent::recorder
