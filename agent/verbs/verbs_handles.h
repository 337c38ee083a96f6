#pragma once

// The concrete owners of libibverbs objects: one deleter per kind, each
// returning the errno value the destroy call reports.

#include <infiniband/verbs.h>
#include <unistd.h>

#include <utility>

#include "agent/verbs/verbs_owner.h"
#include "common/base/unique_fd.h"

namespace hostmesh::agent::verbs {

struct DeviceListDeleter {
  static constexpr const char* kName = "device list";
  int operator()(ibv_device** list) const {
    ibv_free_device_list(list);
    return 0;
  }
};
struct ContextDeleter {
  static constexpr const char* kName = "device context";
  int operator()(ibv_context* context) const { return ibv_close_device(context); }
};
struct CompChannelDeleter {
  static constexpr const char* kName = "completion channel";
  int operator()(ibv_comp_channel* channel) const { return ibv_destroy_comp_channel(channel); }
};
struct PdDeleter {
  static constexpr const char* kName = "protection domain";
  int operator()(ibv_pd* pd) const { return ibv_dealloc_pd(pd); }
};
struct MrDeleter {
  static constexpr const char* kName = "memory region";
  int operator()(ibv_mr* mr) const { return ibv_dereg_mr(mr); }
};
struct CqExDeleter {
  static constexpr const char* kName = "completion queue";
  int operator()(ibv_cq_ex* cq) const { return ibv_destroy_cq(ibv_cq_ex_to_cq(cq)); }
};
struct CqDeleter {
  static constexpr const char* kName = "completion queue";
  int operator()(ibv_cq* cq) const { return ibv_destroy_cq(cq); }
};
struct QpDeleter {
  static constexpr const char* kName = "queue pair";
  int operator()(ibv_qp* qp) const { return ibv_destroy_qp(qp); }
};
struct AhDeleter {
  static constexpr const char* kName = "address handle";
  int operator()(ibv_ah* ah) const { return ibv_destroy_ah(ah); }
};

using UniqueDeviceList = UniqueHandle<ibv_device*, DeviceListDeleter>;
using UniqueContext = UniqueHandle<ibv_context, ContextDeleter>;
using UniqueCompChannel = UniqueHandle<ibv_comp_channel, CompChannelDeleter>;
using UniquePd = UniqueHandle<ibv_pd, PdDeleter>;
using UniqueMr = UniqueHandle<ibv_mr, MrDeleter>;
using UniqueCqEx = UniqueHandle<ibv_cq_ex, CqExDeleter>;
using UniqueCq = UniqueHandle<ibv_cq, CqDeleter>;
using UniqueQp = UniqueHandle<ibv_qp, QpDeleter>;
using UniqueAh = UniqueHandle<ibv_ah, AhDeleter>;

// File descriptors (epoll, eventfd) are owned by hostmesh::UniqueFd.
using hostmesh::UniqueFd;

}  // namespace hostmesh::agent::verbs
