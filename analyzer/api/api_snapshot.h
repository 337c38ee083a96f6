// What the read-only API serves: an immutable snapshot the analyzer's loop
// publishes once a second (or after each judged window). Handlers only read
// it, so a request never blocks ingest or analysis.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/incidents.h"
#include "analyzer/analysis/window_report.h"

namespace hostmesh::analyzer::api {

struct NicInfo {
  std::string name;
  std::string ip;
  int rail = -1;
};

// One agent, by dense HostId; NICs indexed by their wire id (Nic.id).
struct HostInfo {
  std::string agent_id;
  std::string host;
  std::vector<NicInfo> nics;
};

// One device of the inventory, by topology::DeviceId (== analysis::SwitchId
// for switches).
struct DeviceInfo {
  std::string name;
  std::string tier;  // topology::TierName: "host", "rail", "aggregation", "spine"
  int pod = -1;
  int rail = -1;
};

inline constexpr std::uint32_t kNoDevice = analysis::kUnknown;

// One end of a fabric link, from the inventory.
struct LinkEnd {
  std::string device;
  std::string port;
  std::string ip;
  std::uint32_t device_id = kNoDevice;  // index into ApiSnapshot::devices
};
struct LinkInfo {
  std::string name;  // topology::Topology::Describe
  LinkEnd lower;     // host NIC, or the rail switch towards a spine
  LinkEnd upper;
  std::string kind = "fabric";  // topology::LinkKindName: "nic" or "fabric"
};

// The fabric's devices and links, from the inventory (built once at start) or
// learned from traceroutes (rebuilt when learning changed it), shared by
// every snapshot, so publishing once a second copies a pointer, not the fabric.
struct InventoryView {
  std::vector<DeviceInfo> devices;  // by DeviceId
  std::vector<LinkInfo> links;      // by LinkId
};

// Where the traced fabric contradicts the inventory (topology/trace_check.h),
// once two traces showed it and they outnumber those that agree there.
struct TopologyDisagreement {
  std::string kind;  // topology::DisagreementKindName: "miscabled_link", ...
  std::string description;
  std::uint64_t traces = 0;           // that showed it
  std::uint64_t agreeing_traces = 0;  // that answered from the same place as the inventory says
  std::int64_t first_seen_ns = 0;
  std::int64_t last_seen_ns = 0;
  // The latest trace that showed it.
  std::string agent_id;
  std::string src_ip;
  std::string dst_ip;
  std::uint32_t src_port = 0;
};

struct ApiSnapshot {
  std::string version;
  std::int64_t started_ns = 0;  // analyzer start, wall clock
  std::int64_t window_ns = 0;
  std::int64_t grace_ns = 0;
  bool inventory_loaded = false;
  // By HostId: every agent known; shared until an agent joins or reboots.
  std::shared_ptr<const std::vector<HostInfo>> host_table;
  // "inventory", or "learned": from traceroutes, without an inventory.
  std::string topology_source;
  std::uint64_t topology_version = 0;                    // changes when the learned fabric does
  std::shared_ptr<const InventoryView> inventory;        // null before anything is learned
  std::shared_ptr<const analysis::WindowReport> report;  // latest judged window, or null
  std::vector<analysis::Incident> incidents;             // open and recently resolved
  analysis::AnalysisStats stats;                         // at publication
  std::uint64_t state_write_errors = 0;                  // summaries and incidents not stored
  // Feed events (analysis_feed.h FeedStats), by name: paths resolved, ...
  std::vector<std::pair<std::string, std::uint64_t>> feed_events;
  // With an inventory: the confirmed disagreements, and every trace that
  // disagreed by kind (confirmed or not).
  std::shared_ptr<const std::vector<TopologyDisagreement>> disagreements;
  std::vector<std::pair<std::string, std::uint64_t>> disagreeing_traces;
  // The evidence writer's (analyzer/evidence): events by name, and gauges.
  std::vector<std::pair<std::string, std::uint64_t>> evidence_events;
  std::uint64_t evidence_bytes = 0;
  std::uint64_t evidence_incidents = 0;

  const std::vector<HostInfo>& hosts() const { return host_table ? *host_table : kNoHosts; }
  const std::vector<DeviceInfo>& devices() const {
    return inventory ? inventory->devices : kNoInventory.devices;
  }
  const std::vector<LinkInfo>& links() const {
    return inventory ? inventory->links : kNoInventory.links;
  }
  const std::vector<TopologyDisagreement>& topology_disagreements() const {
    return disagreements ? *disagreements : kNoDisagreements;
  }

 private:
  static inline const std::vector<HostInfo> kNoHosts{};
  static inline const InventoryView kNoInventory{};
  static inline const std::vector<TopologyDisagreement> kNoDisagreements{};
};

// The one place the latest snapshot lives: the loop publishes, HTTP handlers
// and /metrics callbacks read, each holding its copy as long as it needs.
class SnapshotHolder {
 public:
  std::shared_ptr<const ApiSnapshot> Get() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  void Set(std::shared_ptr<const ApiSnapshot> snapshot) {
    std::lock_guard lock(mu_);
    current_ = std::move(snapshot);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ApiSnapshot> current_;
};

}  // namespace hostmesh::analyzer::api
