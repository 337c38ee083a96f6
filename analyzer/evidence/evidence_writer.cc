#include "analyzer/evidence/evidence_writer.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analyzer/evidence/probe_budget.h"
#include "common/base/logging.h"

namespace hostmesh::analyzer::evidence {

namespace {

constexpr std::uint64_t kKeyBytes = 12 + 8;  // key, and the write time before the value

WallTime At(std::int64_t ns) {
  return WallTime{std::chrono::nanoseconds{ns}};
}

// A probe's group and 5-tuple as the store has them.
using TupleKey = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t>;

}  // namespace

std::optional<StoredEvidence> ReadEvidence(const store::Store& store, std::uint64_t incident_id,
                                           std::string* error) {
  StoredEvidence out;
  bool header = false;
  const store::StoreStatus status = store.ScanEvidence(incident_id, [&](std::uint32_t part,
                                                                        std::string_view bytes) {
    if (part == 0) {
      header = out.header.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
      return true;
    }
    if (!out.parts.emplace_back().ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      out.parts.pop_back();
      ++out.bad_parts;
    }
    return true;
  });
  if (!status.ok()) {
    if (error != nullptr) *error = status.error;
    return std::nullopt;
  }
  if (!header) return std::nullopt;
  return out;
}

EvidenceWriter::EvidenceWriter(store::Store& store, const Clock& clock, EvidenceConfig config)
    : store_(store), clock_(clock), config_(config) {
  const store::StoreStatus status =
      store_.ScanEvidenceSizes([&](std::uint64_t id, std::uint64_t bytes, WallTime) {
        sizes_[id] = bytes;
        total_bytes_ += bytes;
        return true;
      });
  if (!status.ok()) {
    ++stats_.store_errors;
    GetLogger("analyzer")
        ->warn("evidence sizes not read ({}): the disk cap counts from now", status.error);
  }
  stats_.bytes = total_bytes_;
  stats_.incidents = sizes_.size();
}

EvidenceWriter::~EvidenceWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EvidenceWriter::Start() {
  thread_ = std::thread([this] { Run(); });
}

bool EvidenceWriter::Submit(EvidenceEvent event) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      ++stats_.dropped_queue_full;
      if (!warned_full_) {
        GetLogger("analyzer")
            ->warn("evidence writer behind by {} events: evidence of incident {} not kept",
                   kMaxQueued, event.incident_id);
      }
      warned_full_ = true;
      return false;
    }
    warned_full_ = false;
    queue_.push_back(std::move(event));
    ++submitted_;
  }
  cv_.notify_one();
  return true;
}

void EvidenceWriter::Drain() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = submitted_;
  drained_.wait(lock, [&] { return applied_ >= target || !thread_.joinable(); });
}

void EvidenceWriter::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued applied
    EvidenceEvent event = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Apply(event);
    lock.lock();
    ++applied_;
    drained_.notify_all();
  }
}

void EvidenceWriter::Apply(const EvidenceEvent& event) {
  ++stats_.events;
  if (clock_.MonotonicNow() >= next_expiry_) {
    next_expiry_ = clock_.MonotonicNow() + std::chrono::hours{1};
    Expire();
  }
  v1::evidence::EvidenceHeader& header = HeaderOf(event);
  if (event.verdict) AddVerdict(header, *event.verdict);
  Follow(header, event);
  const std::int64_t from = std::max(event.capture_from_ns, header.capture().to_ns());
  if (from < event.capture_to_ns) Capture(header, event, from, event.capture_to_ns);
  Put(event.incident_id, 0, header.SerializeAsString());
  KeepUnderCap(event.incident_id);
  if (event.closed) {
    headers_.erase(event.incident_id);
    header_bytes_.erase(event.incident_id);
  }
}

v1::evidence::EvidenceHeader& EvidenceWriter::HeaderOf(const EvidenceEvent& event) {
  auto [it, fresh] = headers_.try_emplace(event.incident_id);
  v1::evidence::EvidenceHeader& header = it->second;
  if (fresh) {
    // A restart, or evidence dropped for the cap: what the store still has.
    std::string error;
    if (auto stored = ReadEvidence(store_, event.incident_id, &error)) {
      header = std::move(stored->header);
      header_bytes_[event.incident_id] = kKeyBytes + header.ByteSizeLong();
    } else if (!error.empty()) {
      ++stats_.store_errors;
      GetLogger("analyzer")
          ->warn("evidence of incident {} not read ({}): started anew", event.incident_id, error);
    }
  }
  header.set_incident_id(event.incident_id);
  header.set_kind(event.kind);
  header.set_summary(event.summary);
  if (header.opened_ns() == 0) header.set_opened_ns(event.opened_ns);
  return header;
}

void EvidenceWriter::AddVerdict(v1::evidence::EvidenceHeader& header,
                                const v1::evidence::WindowVerdict& v) {
  auto& verdicts = *header.mutable_verdicts();
  if (!verdicts.empty() && verdicts[verdicts.size() - 1].start_ns() >= v.start_ns()) return;
  if (verdicts.size() >= kMaxVerdicts) {
    // The first half shows the onset, the last the present: the middle goes.
    verdicts.DeleteSubrange(kMaxVerdicts / 2, 1);
    header.mutable_capture()->set_verdicts_dropped(header.capture().verdicts_dropped() + 1);
  }
  *verdicts.Add() = v;
}

void EvidenceWriter::Follow(v1::evidence::EvidenceHeader& header, const EvidenceEvent& event) {
  if (header.groups_size() > 0 || event.targets.empty()) return;
  for (std::size_t i = 0; i < event.targets.size(); ++i) {
    const Target& t = event.targets[i];
    v1::evidence::Group& g = *header.add_groups();
    g.set_index(static_cast<std::uint32_t>(i));
    g.set_role(t.sibling ? "sibling" : "suspect");
    g.set_kind(std::string(TargetKindName(t.kind)));
    g.set_id(t.id);
    g.set_nic(t.nic);
    if (i < event.target_agents.size()) g.set_agent_id(event.target_agents[i]);
  }
  for (const FollowedTuple& f : event.tuples) {
    v1::evidence::Tuple& t = *header.add_tuples();
    t.set_group(f.group);
    t.set_agent_id(f.agent_id);
    t.set_src_nic(f.src_nic);
    t.set_dst_nic(f.dst_nic);
    t.set_src_port(f.src_port);
    t.set_dst_port(4791);
    for (const std::uint32_t l : f.links) t.add_links(l);
  }
  header.mutable_capture()->set_tuples_capped(event.tuples_capped);
  for (const std::string& agent : event.flight_record_agents) {
    header.mutable_capture()->add_flight_record_agents(agent);
  }
}

std::optional<std::vector<v1::evidence::Probe>> EvidenceWriter::ScanProbes(
    v1::evidence::EvidenceHeader& header, std::int64_t from, std::int64_t to,
    std::uint64_t& uncounted) {
  // The followed 5-tuples by (agent, src, dst, port), and the RNIC and host
  // groups, whose 5-tuples are added as their probes show them.
  std::map<TupleKey, std::uint32_t> tuples;
  std::set<std::string> agents;
  for (int i = 0; i < header.tuples_size(); ++i) {
    const v1::evidence::Tuple& t = header.tuples(i);
    tuples[{t.agent_id(), t.src_nic(), t.dst_nic(), t.src_port()}] = static_cast<std::uint32_t>(i);
    agents.insert(t.agent_id());
  }
  std::vector<const v1::evidence::Group*> own_probes;  // RNIC and host groups
  for (const v1::evidence::Group& g : header.groups()) {
    if ((g.kind() == "rnic" || g.kind() == "host") && !g.agent_id().empty()) {
      own_probes.push_back(&g);
      agents.insert(g.agent_id());
    }
  }
  const auto group_of = [&](std::string_view agent, const v1::ProbeResult& r) -> int {
    for (const v1::evidence::Group* g : own_probes) {
      if (g->agent_id() != agent) continue;
      if (g->kind() == "host" || r.src_nic() == g->nic() || r.dst_nic() == g->nic()) {
        return static_cast<int>(g->index());
      }
    }
    return -1;
  };

  std::vector<v1::evidence::Probe> probes;
  const std::vector<std::string> agent_list(agents.begin(), agents.end());
  const store::StoreStatus scan =
      store_.ScanResultsOf(At(from), At(to), agent_list, [&](const store::StoredResult& s) {
        const v1::ProbeResult& r = *s.result;
        if (r.send_failed()) return true;
        TupleKey key{std::string(s.agent_id), r.src_nic(), r.dst_nic(), r.src_port()};
        auto it = tuples.find(key);
        if (it == tuples.end()) {
          const int group = group_of(s.agent_id, r);
          if (group < 0) return true;
          if (header.tuples_size() >= static_cast<int>(config_.max_tuples)) {
            ++uncounted;
            return true;
          }
          v1::evidence::Tuple& t = *header.add_tuples();
          t.set_group(static_cast<std::uint32_t>(group));
          t.set_agent_id(std::get<0>(key));
          t.set_src_nic(r.src_nic());
          t.set_dst_nic(r.dst_nic());
          t.set_src_port(r.src_port());
          t.set_dst_port(r.dst_port());
          it = tuples.emplace(std::move(key), header.tuples_size() - 1).first;
        }
        v1::evidence::Probe& p = probes.emplace_back();
        p.set_tuple(it->second);
        p.set_send_time_ns(r.send_time_ns());
        p.set_timeout(r.timeout());
        if (!r.timeout()) {
          const std::int64_t network = r.nic_recv_ns() - r.nic_send_ns();
          p.set_network_ns(network);
          p.set_processing_ns((r.app_recv_ns() - r.app_send_ns()) - network);
        }
        return true;
      });
  if (!scan.ok()) {
    ++stats_.store_errors;
    GetLogger("analyzer")
        ->warn("evidence of incident {}: probes not read ({})", header.incident_id(), scan.error);
    return std::nullopt;
  }
  return probes;
}

bool EvidenceWriter::Capture(v1::evidence::EvidenceHeader& header, const EvidenceEvent& event,
                             std::int64_t from, std::int64_t to) {
  ++stats_.captures;
  std::uint64_t uncounted = 0;
  std::optional<std::vector<v1::evidence::Probe>> scanned = ScanProbes(header, from, to, uncounted);
  if (!scanned) return false;
  std::vector<v1::evidence::Probe>& probes = *scanned;
  std::stable_sort(probes.begin(), probes.end(), [](const auto& a, const auto& b) {
    return a.send_time_ns() < b.send_time_ns();
  });

  v1::evidence::CaptureInfo& info = *header.mutable_capture();
  const std::uint64_t budget =
      config_.incident_bytes > info.bytes() ? config_.incident_bytes - info.bytes() : 0;
  const BudgetOutcome fit = FitToBudget(probes, budget);
  v1::evidence::EvidencePart part;
  part.set_from_ns(from);
  part.set_to_ns(to);
  for (v1::evidence::Probe& p : probes) *part.add_probes() = std::move(p);
  if (!event.counter_agents.empty()) {
    const store::StoreStatus counters = store_.ScanTelemetryOf(
        At(from), At(to), event.counter_agents, [&](const store::StoredTelemetry& t) {
          v1::evidence::Counters& c = *part.add_counters();
          c.set_agent_id(std::string(t.agent_id));
          *c.mutable_telemetry() = *t.telemetry;
          return true;
        });
    if (!counters.ok()) {
      ++stats_.store_errors;
      GetLogger("analyzer")
          ->warn("evidence of incident {}: counters not read ({})", event.incident_id,
                 counters.error);
    }
  }
  const std::string bytes = part.SerializeAsString();
  info.set_parts(info.parts() + 1);
  Put(event.incident_id, info.parts(), bytes);

  if (info.from_ns() == 0 || from < info.from_ns()) info.set_from_ns(from);
  info.set_to_ns(to);
  info.set_captured_ns(clock_.RealtimeNow().time_since_epoch().count());
  if (fit.every != 1) {
    info.set_thinned_every(std::max(info.thinned_every(), fit.every == 0 ? 0u : fit.every));
  }
  info.set_probes_kept(info.probes_kept() + static_cast<std::uint64_t>(part.probes_size()));
  info.set_probes_thinned(info.probes_thinned() + fit.thinned);
  info.set_probes_over_budget(info.probes_over_budget() + fit.over_budget);
  info.set_bytes(info.bytes() + fit.bytes);
  info.set_tuples_uncounted(info.tuples_uncounted() + uncounted);
  stats_.thinned_probes += fit.thinned;
  return true;
}

void EvidenceWriter::Put(std::uint64_t id, std::uint32_t part, const std::string& bytes) {
  if (const store::StoreStatus s = store_.PutEvidence(id, part, bytes); !s.ok()) {
    ++stats_.store_errors;
    GetLogger("analyzer")->warn("evidence of incident {} not stored ({})", id, s.error);
    return;
  }
  // A header replaces the one before it: only the difference counts.
  const std::uint64_t written = kKeyBytes + bytes.size();
  std::uint64_t replaced = 0;
  if (part == 0) {
    std::uint64_t& header = header_bytes_[id];
    replaced = header;
    header = written;
  }
  std::uint64_t& size = sizes_[id];
  size = size + written - std::min(size, replaced);
  total_bytes_ = total_bytes_ + written - std::min(total_bytes_, replaced);
  stats_.bytes = total_bytes_;
  stats_.incidents = sizes_.size();
}

void EvidenceWriter::KeepUnderCap(std::uint64_t keep) {
  if (total_bytes_ <= config_.disk_cap_bytes) return;
  // The oldest incidents (smallest ids) go first, down to 90% of the cap.
  const std::uint64_t target = config_.disk_cap_bytes / 10 * 9;
  for (auto it = sizes_.begin(); it != sizes_.end() && total_bytes_ > target;) {
    const std::uint64_t id = it->first;
    ++it;
    if (id == keep) continue;
    GetLogger("analyzer")
        ->warn("evidence of incident {} dropped: all evidence over its disk cap ({} bytes)", id,
               config_.disk_cap_bytes);
    ++stats_.dropped_disk_cap;
    Forget(id);
  }
}

void EvidenceWriter::Forget(std::uint64_t id) {
  if (const store::StoreStatus s = store_.DeleteEvidence(id); !s.ok()) {
    ++stats_.store_errors;
    GetLogger("analyzer")->warn("evidence of incident {} not deleted ({})", id, s.error);
    return;
  }
  const auto it = sizes_.find(id);
  if (it != sizes_.end()) {
    total_bytes_ -= std::min(total_bytes_, it->second);
    sizes_.erase(it);
  }
  headers_.erase(id);
  header_bytes_.erase(id);
  stats_.bytes = total_bytes_;
  stats_.incidents = sizes_.size();
}

void EvidenceWriter::Expire() {
  const WallTime cutoff = clock_.RealtimeNow() - store_.options().summary_retention;
  std::vector<std::uint64_t> old;
  const store::StoreStatus status =
      store_.ScanEvidenceSizes([&](std::uint64_t id, std::uint64_t bytes, WallTime written) {
        if (written < cutoff) old.push_back(id);
        // The scan is exact: headers rewritten since the last one counted once.
        if (sizes_.count(id) != 0) {
          total_bytes_ -= std::min(total_bytes_, sizes_[id]);
          sizes_[id] = bytes;
          total_bytes_ += bytes;
        }
        return true;
      });
  if (!status.ok()) {
    ++stats_.store_errors;
    GetLogger("analyzer")->warn("evidence retention: {}", status.error);
    return;
  }
  for (const std::uint64_t id : old) {
    ++stats_.expired;
    Forget(id);
  }
}

}  // namespace hostmesh::analyzer::evidence
