// The verbs transport's address handles: built off the loop's thread (an
// ibv_create_ah can take milliseconds on real NICs), asked for ahead of the
// ports and peers that will need them, collected into each NIC's book.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "agent/verbs/flow_label.h"
#include "agent/verbs/gid_check.h"
#include "agent/verbs/verbs_transport.h"
#include "agent/verbs/verbs_transport_parts.h"

namespace hostmesh::agent::verbs {

using namespace transport_internal;

void VerbsTransport::StartAddressHandleBuilder() {
  // On the builder's thread: ibv_create_ah on the NIC's PD (thread-safe in
  // libibverbs), then the eventfd wakes the loop to collect it.
  ah_builder_ = std::make_unique<BackgroundBuilder<AhJob, AhBuilt>>(
      [](const AhJob& job) {
        AhBuilt built{job.src, job.generation, job.key, UniqueAh(), 0};
        ibv_ah_attr attr = job.attr;
        errno = 0;
        built.ah = UniqueAh(ibv_create_ah(job.pd, &attr));
        if (!built.ah) built.error = errno ? errno : EINVAL;
        return built;
      },
      [this] { WakeLater(); });
}

void VerbsTransport::RequestAddressHandle(Nic& src, const AddressHandleKey& key) {
  if (!is_open(key.dst) || !ah_builder_) {
    src.res.ahs.Abandon(key);  // asked again once the destination is open
    return;
  }
  AhJob job;
  job.src = src.id;
  job.generation = src.generation;
  job.key = key;
  job.pd = src.res.pd.get();
  ibv_ah_attr& attr = job.attr;
  attr.is_global = 1;
  attr.port_num = src.config.port;
  attr.grh.dgid = nics_[key.dst]->gid;
  attr.grh.sgid_index = src.config.gid_index;
  attr.grh.flow_label = key.flow_label;
  attr.grh.hop_limit = options_.hop_limit;
  attr.grh.traffic_class = options_.traffic_class;
  attr.sl = options_.service_level;
  ah_builder_->Submit(job);
}

// Asks the builder for the handles `src` will want towards `destinations`:
// per flow label of its prepared ports, or one per destination (per QP).
void VerbsTransport::WantAddressHandles(Nic& src, std::span<const NicId> destinations) {
  const auto keys = WantedAddressHandles(
      src.port_mode == SourcePortMode::kPerQp, src.id, destinations, src.prepared_ports,
      [](std::uint16_t port) { return FlowLabelForUdpSport(port); });
  for (const AddressHandleKey& key : src.res.ahs.Want(keys, clock_.MonotonicNow())) {
    RequestAddressHandle(src, key);
  }
}

// A pair's handles are asked for when its second NIC opens, both ways.
void VerbsTransport::PrebuildAddressHandles(Nic& opened) {
  WantAddressHandles(opened, open_order_);
  const NicId just[] = {opened.id};
  for (NicId other : open_order_) {
    if (other != opened.id) WantAddressHandles(*nics_[other], just);
  }
}

void VerbsTransport::PrepareSourcePorts(NicId nic, std::span<const std::uint16_t> ports) {
  if (!is_open(nic)) return;
  Nic& n = *nics_[nic];
  n.prepared_ports.assign(ports.begin(), ports.end());
  WantAddressHandles(n, open_order_);
}

// Puts what the builder made into the NICs' books (on the loop's thread).
void VerbsTransport::CollectAddressHandles() {
  if (!ah_builder_) return;
  const MonoTime now = clock_.MonotonicNow();
  for (AhBuilt& built : ah_builder_->TakeDone()) {
    // Its NIC was reopened meanwhile: the handle belongs to a PD that is gone
    // (Reopen forgot those) or to a generation that no longer asks for it.
    if (!is_open(built.src) || nics_[built.src]->generation != built.generation) continue;
    Nic& src = *nics_[built.src];
    VerbsNicStats& stats = stats_[src.id];
    if (!built.ah) {
      ++stats.address_handle_errors;
      src.res.ahs.OnFailed(built.key, built.error, now);
      if (!std::exchange(src.warned_ah_error, true)) {
        Log()->warn(
            "nic {}: ibv_create_ah towards nic {} (flow label {:#x}) failed: {}; its probes are "
            "send failures until a retry works",
            src.config.name, options_.nics[built.key.dst].name, built.key.flow_label,
            std::strerror(built.error));
      }
      continue;
    }
    src.warned_ah_error = false;
    if (src.res.ahs.OnBuilt(built.key, std::move(built.ah))) {
      ++stats.address_handles_created;
    } else {
      ++stats.address_handles_dropped;  // the cache is full of handles in flight
    }
    stats.address_handles_evicted = src.res.ahs.evicted();
  }
}

}  // namespace hostmesh::agent::verbs
