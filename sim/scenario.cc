#include "sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "common/config/config_error.h"
#include "common/config/value_parsers.h"

namespace hostmesh::sim {
namespace {

using config::ConfigIssue;

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  void Issue(const YAML::Node& node, const std::string& path, const std::string& message) {
    ConfigIssue issue;
    issue.source = source_;
    if (node.IsDefined()) {
      issue.line = node.Mark().line + 1;
      issue.column = node.Mark().column + 1;
    }
    issue.path = path;
    issue.message = message;
    issues_.push_back(std::move(issue));
  }
  void Throw() {
    if (!issues_.empty()) throw config::ConfigError(issues_);
  }

  // Keys of `map` must be among `known`.
  void OnlyKeys(const YAML::Node& map, const std::string& path,
                std::initializer_list<std::string_view> known) {
    if (!map.IsMap()) {
      Issue(map, path, "must be a map");
      return;
    }
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      bool ok = false;
      for (const auto k : known) ok |= k == key;
      if (!ok) Issue(kv.first, Join(path, key), "unknown key");
    }
  }

  // The text of a scalar; an issue (and nullopt) for a list, a map or nothing.
  std::optional<std::string> Text(const YAML::Node& n, const std::string& path) {
    if (n.IsScalar()) return n.Scalar();
    Issue(n, path, n.IsNull() ? "needs a value" : "must be a single value, not a list or a map");
    return std::nullopt;
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  std::int64_t Duration(const YAML::Node& n, const std::string& path, std::int64_t fallback) {
    if (!n) return fallback;
    const auto text = Text(n, path);
    if (!text) return fallback;
    const auto d = config::ParseDuration(*text);
    if (!d) {
      Issue(n, path, "not a duration (for example 100ms, 20s, 5m): \"" + *text + "\"");
      return fallback;
    }
    return d->count();
  }
  double Number(const YAML::Node& n, const std::string& path, double fallback, double lo,
                double hi) {
    if (!n) return fallback;
    const auto text = Text(n, path);
    if (!text) return fallback;
    const auto v = config::ParseDouble(*text);
    if (!v || *v < lo || *v > hi) {
      std::ostringstream m;
      m << "must be a number in [" << lo << ", " << hi << "], got \"" << *text << "\"";
      Issue(n, path, m.str());
      return fallback;
    }
    return *v;
  }
  int Int(const YAML::Node& n, const std::string& path, int fallback, int lo, int hi) {
    return static_cast<int>(Number(n, path, fallback, lo, hi));
  }

 private:
  std::string source_;
  std::vector<ConfigIssue> issues_;
};

// A rate: 0.005, or "0.5%".
double Rate(Reader& r, const YAML::Node& n, const std::string& path, double fallback) {
  if (!n) return fallback;
  const auto given = r.Text(n, path);
  if (!given) return fallback;
  std::string text = *given;
  double scale = 1;
  if (!text.empty() && text.back() == '%') {
    text.pop_back();
    scale = 0.01;
  }
  const auto v = config::ParseDouble(text);
  if (!v || *v * scale <= 0 || *v * scale > 1) {
    r.Issue(n, path, "must be a rate in (0, 1] (0.005 or 0.5%), got \"" + *given + "\"");
    return fallback;
  }
  return *v * scale;
}

std::optional<std::uint32_t> FindLink(const Fleet& fleet, const std::string& name) {
  const auto& links = fleet.topology().links();
  for (std::uint32_t i = 0; i < links.size(); ++i) {
    if (links[i].name == name) return i;
  }
  return std::nullopt;
}

void ParseFault(Reader& r, const Fleet& fleet, const YAML::Node& n, const std::string& path,
                std::int64_t duration, Fault& f) {
  r.OnlyKeys(n, path,
             {"kind", "link", "direction", "host", "nic", "switch", "rate", "period", "ports",
              "added", "start", "end"});
  if (!n.IsMap()) return;
  const auto kind = n["kind"] ? r.Text(n["kind"], path + ".kind") : std::nullopt;
  if (n["kind"] && !kind) return;
  if (!kind || !FaultKindFromName(*kind, &f.kind)) {
    r.Issue(n["kind"] ? n["kind"] : n, path + ".kind",
            "must be one of link_loss, link_down, link_flap, rnic_down, rnic_loss, rnic_flap, "
            "switch_loss, blackhole, link_latency, host_processing, host_leave, agent_restart");
    return;
  }
  f.start_ns = r.Duration(n["start"], path + ".start", 0);
  f.end_ns = r.Duration(n["end"], path + ".end", duration);
  if (f.end_ns <= f.start_ns)
    r.Issue(n["end"] ? n["end"] : n, path + ".end", "must be after start");
  const auto need = [&](const char* key) {
    if (!n[key]) r.Issue(n, path + "." + key, "required for " + *kind);
    return static_cast<bool>(n[key]);
  };
  const bool on_link = FaultOnLink(f.kind);
  const bool on_nic = FaultOnNic(f.kind);
  const bool on_host = on_nic || f.kind == FaultKind::kHostProcessing ||
                       f.kind == FaultKind::kHostLeave || f.kind == FaultKind::kAgentRestart;
  if (on_link && need("link")) {
    if (const auto name = r.Text(n["link"], path + ".link")) {
      if (const auto l = FindLink(fleet, *name)) {
        f.link = *l;
      } else {
        r.Issue(n["link"], path + ".link", "no link named \"" + *name + "\" in this fabric");
      }
    }
    if (n["direction"]) {
      const std::string d = r.Text(n["direction"], path + ".direction").value_or("both");
      if (d == "up")
        f.direction = kUp;
      else if (d == "down")
        f.direction = kDown;
      else if (d == "both")
        f.direction = kBoth;
      else
        r.Issue(n["direction"], path + ".direction", "must be up, down or both");
    }
  }
  if (on_host && need("host")) {
    const auto name = r.Text(n["host"], path + ".host");
    bool found = !name;  // not a name: already reported
    for (std::uint32_t h = 0; h < fleet.hosts().size() && !found; ++h) {
      if (fleet.hosts()[h].name == *name) {
        f.host = h;
        found = true;
      }
    }
    if (!found)
      r.Issue(n["host"], path + ".host", "no host named \"" + *name + "\" in this fabric");
  }
  if (on_nic && need("nic")) {
    f.nic =
        static_cast<std::uint32_t>(r.Int(n["nic"], path + ".nic", 0, 0, fleet.shape().rails - 1));
  }
  if (f.kind == FaultKind::kSwitchLoss && need("switch")) {
    const auto name = r.Text(n["switch"], path + ".switch");
    const auto d = name ? fleet.topology().FindDevice(*name) : std::nullopt;
    if (!name) {
      // already reported
    } else if (!d || !fleet.is_switch(*d)) {
      r.Issue(n["switch"], path + ".switch", "no switch named \"" + *name + "\" in this fabric");
    } else {
      f.switch_id = *d;
    }
  }
  if (FaultHasRate(f.kind)) {
    if (need("rate")) f.rate = Rate(r, n["rate"], path + ".rate", 1.0);
  }
  if (f.kind == FaultKind::kLinkFlap || f.kind == FaultKind::kRnicFlap) {
    if (need("period")) {
      f.period_ns = r.Duration(n["period"], path + ".period", 1);
      if (f.period_ns <= 0) r.Issue(n["period"], path + ".period", "must be more than 0");
    }
  }
  if (f.kind == FaultKind::kBlackhole && need("ports")) {
    const auto given = r.Text(n["ports"], path + ".ports");
    const std::string text = given.value_or("");
    const auto dash = text.find('-');
    const auto lo = config::ParseUint64(text.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : config::ParseUint64(text.substr(dash + 1));
    if (!given) {
      // already reported
    } else if (!lo || !hi || *lo > *hi || *hi > 65535) {
      r.Issue(n["ports"], path + ".ports",
              "must be a port or a range MIN-MAX, got \"" + text + "\"");
    } else {
      f.port_min = static_cast<std::uint16_t>(*lo);
      f.port_max = static_cast<std::uint16_t>(*hi);
    }
  }
  if (FaultHasAdded(f.kind)) {
    if (need("added")) f.added_ns = r.Duration(n["added"], path + ".added", 0);
  }
}

// The run's seed: any 64-bit integer (a suite draws them over the whole range).
std::uint64_t Seed(Reader& r, const YAML::Node& n) {
  if (!n) return 1;
  const auto text = r.Text(n, "seed");
  if (!text) return 1;
  const auto v = config::ParseUint64(*text);
  if (!v) r.Issue(n, "seed", "must be an integer in [0, 2^64), got \"" + *text + "\"");
  return v.value_or(1);
}

}  // namespace

// Moving congestion and the queue of a congested port (congestion.h).
void ParseCongestion(Reader& r, const YAML::Node& g, LatencyModel& l) {
  MovingCongestionModel& m = l.moving;
  m.share = r.Number(g["share"], "congestion.share", m.share, 0, 1);
  m.min_added_ns = r.Duration(g["min_added"], "congestion.min_added", m.min_added_ns);
  m.max_added_ns = r.Duration(g["max_added"], "congestion.max_added", m.max_added_ns);
  m.min_duration_ns = r.Duration(g["min_duration"], "congestion.min_duration", m.min_duration_ns);
  m.max_duration_ns = r.Duration(g["max_duration"], "congestion.max_duration", m.max_duration_ns);
  if (m.max_added_ns < m.min_added_ns) r.Issue(g, "congestion", "max_added must be >= min_added");
  if (m.max_duration_ns < m.min_duration_ns) {
    r.Issue(g, "congestion", "max_duration must be >= min_duration");
  }
  QueueModel& q = l.queue;
  q.sigma = r.Number(g["wander"], "congestion.wander", q.sigma, 0, 3);
  q.knot_ns = r.Duration(g["knot"], "congestion.knot", q.knot_ns);
  if (q.knot_ns <= 0) r.Issue(g["knot"], "congestion.knot", "must be positive");
  q.busy = r.Number(g["busy"], "congestion.busy", q.busy, 0.01, 1);
  if (g["tail"]) {
    const auto given = r.Text(g["tail"], "congestion.tail");
    const auto on = given ? config::ParseBool(*given) : std::nullopt;
    if (on) q.tail = *on;
    if (given && !on) r.Issue(g["tail"], "congestion.tail", "must be true or false");
  }
}

Scenario ParseScenario(std::string_view text, std::string_view source_name) {
  Reader r(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    ConfigIssue issue{std::string(source_name), e.mark.line + 1, e.mark.column + 1, "", e.msg};
    throw config::ConfigError({issue});
  }
  Scenario s;
  s.name = std::string(source_name);
  r.OnlyKeys(root, "",
             {"name", "fabric", "duration", "seed", "hash_seed", "window", "threads", "agent",
              "background_loss", "congestion", "faults"});
  r.Throw();
  if (root["fabric"])
    r.OnlyKeys(root["fabric"], "fabric",
               {"hosts", "rails", "spines", "pods", "tiers", "aggregations"});
  if (root["agent"]) {
    r.OnlyKeys(root["agent"], "agent",
               {"interval", "timeout", "pool_size", "rotation_period", "trace_refresh",
                "trace_rate", "traceroute"});
  }
  if (root["background_loss"])
    r.OnlyKeys(root["background_loss"], "background_loss", {"min", "max"});
  if (root["congestion"]) {
    r.OnlyKeys(root["congestion"], "congestion",
               {"share", "min_added", "max_added", "min_duration", "max_duration", "wander", "knot",
                "busy", "tail"});
  }
  if (root["name"]) s.name = r.Text(root["name"], "name").value_or(s.name);
  SimConfig& c = s.config;
  if (const auto f = root["fabric"]; f && f.IsMap()) {
    c.shape.hosts = r.Int(f["hosts"], "fabric.hosts", c.shape.hosts, 2, 100000);
    c.shape.rails = r.Int(f["rails"], "fabric.rails", c.shape.rails, 2, 32);
    c.shape.spines = r.Int(f["spines"], "fabric.spines", c.shape.spines, 1, 1024);
    c.shape.pods = r.Int(f["pods"], "fabric.pods", c.shape.pods, 1, 1024);
    c.shape.tiers = r.Int(f["tiers"], "fabric.tiers", c.shape.tiers, 2, 3);
    c.shape.aggregations = r.Int(f["aggregations"], "fabric.aggregations", 0, 0, 1024);
  }
  c.duration_ns = r.Duration(root["duration"], "duration", c.duration_ns);
  c.seed = Seed(r, root["seed"]);
  c.hash_seed =
      static_cast<std::uint32_t>(r.Number(root["hash_seed"], "hash_seed", 0, 0, 4294967295.0));
  c.threads = r.Int(root["threads"], "threads", c.threads, 1, 256);
  c.analysis.window =
      std::chrono::nanoseconds{r.Duration(root["window"], "window", c.analysis.window.count())};
  if (const auto a = root["agent"]; a && a.IsMap()) {
    c.agent.probe.interval = std::chrono::nanoseconds{
        r.Duration(a["interval"], "agent.interval", c.agent.probe.interval.count())};
    c.agent.probe.timeout = std::chrono::nanoseconds{
        r.Duration(a["timeout"], "agent.timeout", c.agent.probe.timeout.count())};
    c.agent.ports.pool_size =
        static_cast<std::uint32_t>(r.Int(a["pool_size"], "agent.pool_size", 16, 1, 4096));
    c.agent.ports.rotation_period = std::chrono::nanoseconds{r.Duration(
        a["rotation_period"], "agent.rotation_period", c.agent.ports.rotation_period.count())};
    c.agent.traceroute.refresh_period = std::chrono::nanoseconds{r.Duration(
        a["trace_refresh"], "agent.trace_refresh", c.agent.traceroute.refresh_period.count())};
    c.agent.traceroute.rate_per_second = r.Number(a["trace_rate"], "agent.trace_rate",
                                                  c.agent.traceroute.rate_per_second, 0.1, 100000);
    if (a["traceroute"]) {
      const auto given = r.Text(a["traceroute"], "agent.traceroute");
      const auto on = given ? config::ParseBool(*given) : std::nullopt;
      if (on) c.agent.traceroute.enabled = *on;
      if (given && !on) r.Issue(a["traceroute"], "agent.traceroute", "must be true or false");
    }
  }
  if (const auto b = root["background_loss"]; b && b.IsMap()) {
    c.background.min = r.Number(b["min"], "background_loss.min", 0, 0, 1);
    c.background.max = r.Number(b["max"], "background_loss.max", c.background.min, 0, 1);
    if (c.background.max < c.background.min) r.Issue(b, "background_loss", "max must be >= min");
  }
  if (const auto g = root["congestion"]; g && g.IsMap()) ParseCongestion(r, g, c.latency);
  r.Throw();
  Fleet fleet(c.shape);
  if (const auto faults = root["faults"]) {
    if (!faults.IsSequence()) r.Issue(faults, "faults", "must be a list");
    for (std::size_t i = 0; faults.IsSequence() && i < faults.size(); ++i) {
      Fault f;
      ParseFault(r, fleet, faults[i], "faults[" + std::to_string(i) + "]", c.duration_ns, f);
      c.faults.push_back(f);
    }
  }
  r.Throw();
  return s;
}

Scenario LoadScenarioFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw config::ConfigError({ConfigIssue{path.string(), 0, 0, "", "cannot read the file"}});
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), path.string());
}

std::string DescribeFault(const Fleet& fleet, const Fault& f) {
  std::ostringstream out;
  out << FaultKindName(f.kind);
  const auto& topo = fleet.topology();
  if (f.link != topology::kNone && f.link < fleet.link_count()) {
    out << ' ' << topo.link(f.link).name;
    if (f.direction == kUp) out << " up";
    if (f.direction == kDown) out << " down";
  }
  if (f.kind == FaultKind::kSwitchLoss && f.switch_id < fleet.device_count()) {
    out << ' ' << topo.device(f.switch_id).name;
  }
  const bool host_kind = FaultOnNic(f.kind) || f.kind == FaultKind::kHostProcessing ||
                         f.kind == FaultKind::kHostLeave || f.kind == FaultKind::kAgentRestart;
  if (host_kind && f.host < fleet.hosts().size()) {
    out << ' ' << fleet.hosts()[f.host].name;
    if (FaultOnNic(f.kind)) out << "/nic" << f.nic;
  }
  if (FaultHasRate(f.kind)) {
    out << ' ' << std::setprecision(3) << f.rate * 100 << '%';
  }
  if (f.period_ns > 0) out << " period " << f.period_ns / 1'000'000 << "ms";
  if (f.kind == FaultKind::kBlackhole) out << " ports " << f.port_min << '-' << f.port_max;
  if (f.added_ns > 0) out << " +" << f.added_ns / 1000 << "us";
  out << ' ' << f.start_ns / 1'000'000'000 << "s-" << f.end_ns / 1'000'000'000 << 's';
  return out.str();
}

}  // namespace hostmesh::sim
