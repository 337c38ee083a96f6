#include "agent/verbs/verbs_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "agent/verbs/address_handle_book.h"
#include "agent/verbs/flow_label.h"
#include "agent/verbs/gid_check.h"
#include "agent/verbs/queue_sizing.h"
#include "agent/verbs/source_port.h"
#include "agent/verbs/verbs_transport_parts.h"
#include "common/base/logging.h"

namespace hostmesh::agent::verbs {
using namespace transport_internal;

VerbsTransport::VerbsTransport(const Clock& clock, VerbsTransportOptions options)
    : clock_(clock), options_(std::move(options)) {
  nics_.resize(options_.nics.size());
  stats_.resize(options_.nics.size());
  health_.resize(options_.nics.size());  // never resized again: Nic::health points in
  StartAddressHandleBuilder();
  options_.send_queue_depth = std::max<std::uint32_t>(options_.send_queue_depth, 1);
  options_.recv_queue_depth = std::max<std::uint32_t>(options_.recv_queue_depth, 1);
  options_.clock_samples_per_round = std::max<std::uint32_t>(options_.clock_samples_per_round, 1);
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  wake_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!epoll_.valid() || !wake_.valid()) {
    // Not fatal: the I/O loop then polls on its own timer (ReadyFd() == -1).
    Log()->warn("verbs transport has no ready fd: {}", std::strerror(errno));
    epoll_ = UniqueFd();
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u32 = kWakeTag;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev);
}

VerbsTransport::~VerbsTransport() {
  // The builder first: it may be using a NIC's PD, and holds AHs of theirs.
  ah_builder_.reset();
  // The last NIC opened goes first; each NIC's own members then go in reverse
  // creation order (BasicNicResources), and the device list goes last.
  for (auto it = open_order_.rbegin(); it != open_order_.rend(); ++it) nics_[*it].reset();
}

bool VerbsTransport::is_open(NicId nic) const {
  return nic < nics_.size() && nics_[nic];
}
const VerbsNicStats& VerbsTransport::nic_stats(NicId nic) const {
  return stats_.at(nic);
}
std::uint32_t VerbsTransport::qp_num(NicId nic) const {
  return is_open(nic) ? nics_[nic]->qpn : 0;
}
std::optional<SourcePortMode> VerbsTransport::source_port_mode(NicId nic) const {
  if (!is_open(nic)) return std::nullopt;
  return nics_[nic]->port_mode;
}

const NicHealth* VerbsTransport::nic_health(NicId nic) const {
  return nic < health_.size() && health_[nic] ? &*health_[nic] : nullptr;
}

VerbsClockState VerbsTransport::clock_state(NicId nic) const {
  VerbsClockState state;
  if (!is_open(nic)) return state;
  const Nic& n = *nics_[nic];
  state.mode = n.res.cq.mode();
  if (n.clock) {
    state.fitted = n.clock->ready();
    state.error_bound_ns = n.clock->error_bound_ns();
    state.residual_ns = n.clock->residual_ns();
    state.drift_ppm = n.clock->drift_ppm();
  }
  return state;
}

OpenResult VerbsTransport::OpenNic(NicId nic) {
  OpenResult result;
  if (nic >= nics_.size()) {
    result.error = "NIC id " + std::to_string(nic) + " is not in the verbs NIC list";
    return result;
  }
  if (!nics_[nic]) {
    auto built = Build(nic);
    if (!built) {
      result.error = built.error().message;
      Log()->error("nic {}: cannot open for verbs: {}", options_.nics[nic].name, result.error);
      return result;
    }
    nics_[nic] = std::move(built).value();
    open_order_.push_back(nic);
    PrebuildAddressHandles(*nics_[nic]);
  }
  const Nic& n = *nics_[nic];
  const bool hardware = n.res.cq.mode() == CompletionTimestampMode::kWallclock || n.clock;
  const TimestampSource source = hardware ? TimestampSource::kHardware : TimestampSource::kUser;
  result.ok = true;
  result.capabilities = NicCapabilities{source, source};
  for (const auto& [port, qp] : n.qp_for_port) result.source_ports.push_back(port);
  result.rotation = n.port_mode == SourcePortMode::kFlowLabel ? SourcePortRotation::kFlowLabel
                    : n.qp_for_port.size() > 1                ? SourcePortRotation::kPerQp
                                                              : SourcePortRotation::kFixed;
  return result;
}

VerbsResult<std::unique_ptr<VerbsTransport::Nic>> VerbsTransport::Build(NicId id) {
  const VerbsNicOptions& cfg = options_.nics[id];
  auto device = FindDevice(cfg.rdma_device);
  if (!device) return device.error();
  auto nic = std::make_unique<Nic>();
  nic->id = id;
  nic->config = cfg;
  const std::string where = "(" + cfg.rdma_device + " port " + std::to_string(cfg.port) + ")";
  ibv_device_attr_ex dev_attr{};
  ibv_port_attr port_attr{};
  // In order, each only once the one before succeeded.
  if (auto step = OpenDevice(*nic, device.value(), where, dev_attr, port_attr); !step) {
    return step.error();
  }
  if (auto step = RegisterBuffers(*nic, dev_attr, where); !step) return step.error();
  if (auto step = CreateQueues(*nic, dev_attr, where); !step) return step.error();
  if (auto step = PostAndArm(*nic, port_attr, where); !step) return step.error();
  const CompletionTimestampMode mode = SetUpClock(*nic, dev_attr, where);
  if (auto watched = WatchFds(*nic, where); !watched) return watched.error();
  Log()->info(
      "nic {}: verbs UD on {} gid[{}] {} qpn {:#x}, max payload {} B, completion timestamps: {}"
      "{}, source ports by {}{}",
      cfg.name, where, cfg.gid_index, GidText(nic->gid), nic->qpn, nic->max_payload,
      CompletionTimestampModeName(mode),
      nic->clock ? " (" + std::to_string(dev_attr.hca_core_clock) + " kHz)" : "",
      SourcePortModeName(nic->port_mode),
      nic->port_mode == SourcePortMode::kPerQp
          ? " (" + std::to_string(nic->qp_for_port.size()) + " send QPs, one port each)"
          : "");
  return nic;
}

// The device of that name; the list is asked again while empty, so a device
// that appears later (module load) is found.
VerbsResult<ibv_device*> VerbsTransport::FindDevice(const std::string& dev_name) {
  if (device_count_ == 0) {
    // Asked again while empty, so a device that appears later (module load) is found.
    int count = 0;
    errno = 0;
    device_list_ = UniqueDeviceList(ibv_get_device_list(&count));
    if (!device_list_ && errno != 0 && errno != ENOSYS) {
      return ErrnoError("ibv_get_device_list", errno);
    }
    device_count_ = device_list_ ? count : 0;
  }
  if (device_count_ == 0) {
    return VerbsError{ENODEV, "no RDMA device: ibv_get_device_list returned 0 devices"};
  }
  ibv_device* device = nullptr;
  std::string known;
  for (int i = 0; i < device_count_; ++i) {
    ibv_device* candidate = device_list_.get()[i];
    const std::string name = ibv_get_device_name(candidate);
    if (name == dev_name) device = candidate;
    known += (known.empty() ? "" : ", ") + name;
  }
  if (device == nullptr) {
    return VerbsError{ENODEV,
                      "RDMA device '" + dev_name + "' not found (this host has: " + known + ")"};
  }
  return device;
}

// Opens the device and checks its port and GID; the completion channel and PD.
VerbsStatus VerbsTransport::OpenDevice(Nic& nic, ibv_device* device, const std::string& where,
                                       ibv_device_attr_ex& dev_attr, ibv_port_attr& port_attr) {
  const VerbsNicOptions& cfg = nic.config;
  auto& res = nic.res;
  errno = 0;
  res.context = UniqueContext(ibv_open_device(device));
  if (!res.context) return ErrnoError("ibv_open_device" + where, errno ? errno : ENODEV);
  ibv_context* ctx = res.context.get();

  if (int rc = ibv_query_device_ex(ctx, nullptr, &dev_attr); rc != 0) {
    return ErrnoError("ibv_query_device_ex" + where, rc);
  }
  if (int rc = ibv_query_port(ctx, cfg.port, &port_attr); rc != 0) {
    return ErrnoError("ibv_query_port" + where, rc);
  }
  if (port_attr.state != IBV_PORT_ACTIVE) {
    Log()->warn("nic {}: {} is not active (state {}); probes will fail until it is", cfg.name,
                where, ibv_port_state_str(port_attr.state));
  }
  if (port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
    Log()->warn("nic {}: {} is not Ethernet: source ports only exist on RoCE", cfg.name, where);
  }
  if (auto checked = CheckGid(ctx, cfg, port_attr, where); !checked) {
    return checked.error();
  } else {
    nic.gid = checked.value();
  }
  // A UD message is at most one MTU; larger probes could never be received.
  nic.max_payload = std::min(options_.max_payload_bytes, MtuBytes(port_attr.active_mtu));

  errno = 0;
  res.channel = UniqueCompChannel(ibv_create_comp_channel(ctx));
  if (!res.channel) return ErrnoError("ibv_create_comp_channel" + where, errno ? errno : EIO);
  const int fd = res.channel.get()->fd;
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    return ErrnoError("fcntl(O_NONBLOCK) on the completion channel" + where, errno);
  }

  errno = 0;
  res.pd = UniquePd(ibv_alloc_pd(ctx));
  if (!res.pd) return ErrnoError("ibv_alloc_pd" + where, errno ? errno : ENOMEM);
  return VerbsOk{};
}

VerbsStatus VerbsTransport::RegisterBuffers(Nic& nic, const ibv_device_attr_ex& dev_attr,
                                            const std::string& where) {
  const VerbsNicOptions& cfg = nic.config;
  auto& res = nic.res;
  // Sized for the probe rate (queue_sizing.h) but never past what the device allows.
  nic.recv_slots = options_.recv_queue_depth;
  if (const auto max_wr = static_cast<std::uint32_t>(std::max(dev_attr.orig_attr.max_qp_wr, 1));
      nic.recv_slots > max_wr) {
    Log()->warn(
        "nic {}: {} allows {} receives per QP, fewer than the {} the probe rate wants; "
        "probes arriving during a long poll stall may be dropped",
        cfg.name, where, max_wr, nic.recv_slots);
    nic.recv_slots = max_wr;
  }
  nic.recv_slot_bytes = kGrhBytes + nic.max_payload;
  res.buffer.resize(std::size_t{nic.recv_slots} * nic.recv_slot_bytes +
                    std::size_t{options_.send_queue_depth} * nic.max_payload);
  errno = 0;
  res.mr = UniqueMr(
      ibv_reg_mr(res.pd.get(), res.buffer.data(), res.buffer.size(), IBV_ACCESS_LOCAL_WRITE));
  if (!res.mr) return ErrnoError("ibv_reg_mr" + where, errno ? errno : ENOMEM);
  return VerbsOk{};
}

// The CQ, the UD QP that receives (and sends, by flow label), and where the
// device fixes the source port per QP, a pool of send-only QPs.
VerbsStatus VerbsTransport::CreateQueues(Nic& nic, const ibv_device_attr_ex& dev_attr,
                                         const std::string& where) {
  auto& res = nic.res;
  const bool want_timestamps =
      options_.use_completion_timestamps && dev_attr.completion_timestamp_mask != 0;
  const int cq_entries = static_cast<int>(options_.send_queue_depth + nic.recv_slots);
  auto cq = CompletionQueue::Create(res.context.get(), res.channel.get(), cq_entries,
                                    want_timestamps, nic.config.rdma_device);
  if (!cq) return cq.error();
  res.cq = std::move(cq).value();

  auto qp = CreateUdQp(nic, nic.recv_slots, where);
  if (!qp) return qp.error();
  res.qp = std::move(qp).value();
  nic.qpn = res.qp.get()->qp_num;

  // Where the device fixes the source port per QP, probes leave from a pool
  // of send-only QPs, one per port; the receive QP above only receives.
  nic.port_mode = SourcePortModeForVendor(dev_attr.orig_attr.vendor_id);
  if (nic.port_mode == SourcePortMode::kPerQp) {
    for (std::uint32_t i = 0; i < options_.source_qps; ++i) {
      auto send_qp = CreateUdQp(nic, 1, where);
      if (!send_qp) return send_qp.error();
      const std::uint16_t port = RxeQpSourcePort(send_qp.value().get()->qp_num);
      const bool taken = std::any_of(nic.qp_for_port.begin(), nic.qp_for_port.end(),
                                     [&](const auto& entry) { return entry.first == port; });
      nic.send_qps.push_back(std::move(send_qp).value());
      if (!taken) {
        nic.qp_for_port.emplace_back(port, static_cast<std::uint32_t>(nic.send_qps.size()));
      }
    }
    std::sort(nic.qp_for_port.begin(), nic.qp_for_port.end());
  }
  return VerbsOk{};
}

// Health, handles and slots; every receive posted and the CQ armed.
VerbsStatus VerbsTransport::PostAndArm(Nic& nic, const ibv_port_attr& port_attr,
                                       const std::string& where) {
  const NicId id = nic.id;
  auto& res = nic.res;
  nic.port_active_at_open = port_attr.state == IBV_PORT_ACTIVE;
  if (!health_[id]) {
    health_[id].emplace(static_cast<std::uint32_t>(1 + nic.send_qps.size()),
                        nic.port_active_at_open, clock_.MonotonicNow());
  }
  nic.health = &*health_[id];
  res.ahs = BasicAddressHandleBook<UniqueAh>(options_.max_address_handles);
  nic.generation = ++nic_generations_;
  for (std::uint32_t slot = 0; slot < nic.recv_slots; ++slot) {
    if (auto posted = PostReceive(nic, slot); !posted) return posted.error();
  }
  nic.send_slots.resize(options_.send_queue_depth);
  for (std::uint32_t slot = options_.send_queue_depth; slot > 0; --slot) {
    nic.free_send_slots.push_back(slot - 1);
  }
  if (int rc = ibv_req_notify_cq(res.cq.cq(), 0); rc != 0) {
    return ErrnoError("ibv_req_notify_cq" + where, rc);
  }
  return VerbsOk{};
}

// The NIC clock fit, when the CQ gives raw ticks and the device its clock.
CompletionTimestampMode VerbsTransport::SetUpClock(Nic& nic, const ibv_device_attr_ex& dev_attr,
                                                   const std::string& where) {
  const VerbsNicOptions& cfg = nic.config;
  auto& res = nic.res;
  const CompletionTimestampMode mode = res.cq.mode();
  if (res.cq.has_raw_timestamps() && dev_attr.hca_core_clock != 0) {
    ClockFitOptions fit;
    fit.nic_clock_khz = dev_attr.hca_core_clock;
    fit.counter_mask = dev_attr.completion_timestamp_mask;
    fit.window = options_.clock_window;
    fit.fit_samples = options_.clock_fit_samples;
    nic.clock.emplace(fit);
    nic.sample_period = options_.clock_sample_period;
    // Unwrapping needs a sample at least every half counter period.
    if (auto half = nic.clock->half_wrap_period_ns()) {
      nic.sample_period = std::min(nic.sample_period, std::chrono::nanoseconds{*half / 2});
    }
    SampleClock(nic);
  } else if (mode == CompletionTimestampMode::kRawClock) {
    Log()->warn("nic {}: {} has completion timestamps but no core clock frequency", cfg.name,
                where);
  }
  if (mode == CompletionTimestampMode::kNone ||
      (mode == CompletionTimestampMode::kRawClock && !nic.clock)) {
    Log()->warn(
        "nic {}: {} gives no usable completion timestamps (mask {:#x}); timestamps (2) and (3) "
        "are software poll times, reported as source USER",
        cfg.name, where, dev_attr.completion_timestamp_mask);
  }
  return mode;
}

VerbsStatus VerbsTransport::WatchFds(Nic& nic, const std::string& where) {
  const NicId id = nic.id;
  const int fd = nic.res.channel.get()->fd;
  // Port changes, fatal QPs and device errors arrive on the context's async
  // fd (nic_health.h); read without blocking whenever it is readable.
  const int async_fd = nic.res.context.get()->async_fd;
  if (fcntl(async_fd, F_SETFL, fcntl(async_fd, F_GETFL) | O_NONBLOCK) != 0) {
    return ErrnoError("fcntl(O_NONBLOCK) on the async event fd" + where, errno);
  }
  nic.async_events.emplace(nic.res.context.get());
  if (epoll_.valid()) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = id;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      return ErrnoError("epoll_ctl(completion channel)" + where, errno);
    }
    ev.data.u32 = id | kAsyncTag;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, async_fd, &ev) != 0) {
      return ErrnoError("epoll_ctl(async event fd)" + where, errno);
    }
  }
  return VerbsOk{};
}

namespace {

GidType GidTypeOf(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB:
      return GidType::kIb;
    case IBV_GID_TYPE_ROCE_V1:
      return GidType::kRoceV1;
    default:
      return GidType::kRoceV2;
  }
}

}  // namespace

// The configured GID must be RoCEv2 and hold the NIC's address (gid_check.h);
// a wrong one fails the open with the index that would work, if any.
VerbsResult<ibv_gid> VerbsTransport::CheckGid(ibv_context* ctx, const VerbsNicOptions& cfg,
                                              const ibv_port_attr& port_attr,
                                              const std::string& where) {
  ibv_gid_entry raw{};
  if (int rc = ibv_query_gid_ex(ctx, cfg.port, cfg.gid_index, &raw, 0); rc != 0) {
    return ErrnoError("ibv_query_gid_ex" + where + " index " + std::to_string(cfg.gid_index), rc);
  }
  const auto to_entry = [](const ibv_gid_entry& e) {
    GidEntry out;
    out.index = e.gid_index;
    std::copy(std::begin(e.gid.raw), std::end(e.gid.raw), out.raw.begin());
    out.type = GidTypeOf(e.gid_type);
    return out;
  };
  const std::optional<Ipv4Bytes> ip = ParseIpv4(cfg.ip);
  const std::string problem = GidProblem(to_entry(raw), ip);
  if (problem.empty()) return raw.gid;
  std::string hint = "; pick the RoCEv2 GID of the NIC's address";
  if (ip) {
    std::vector<GidEntry> table;
    for (int i = 0; i < port_attr.gid_tbl_len; ++i) {
      ibv_gid_entry e{};
      if (ibv_query_gid_ex(ctx, cfg.port, static_cast<std::uint32_t>(i), &e, 0) == 0) {
        table.push_back(to_entry(e));
      }
    }
    if (auto found = FindRoceV2Gid(table, *ip)) {
      hint = "; gid_index " + std::to_string(*found) + " is the RoCEv2 GID of " + cfg.ip;
    } else {
      hint = "; no RoCEv2 GID of " + cfg.ip + " on this port (is the address on its netdev?)";
    }
  }
  return VerbsError{EINVAL, problem + " of " + where + hint};
}

VerbsResult<UniqueQp> VerbsTransport::CreateUdQp(Nic& nic, std::uint32_t recv_depth,
                                                 const std::string& where) {
  auto& res = nic.res;
  ibv_qp_init_attr qp_init{};
  qp_init.send_cq = res.cq.cq();
  qp_init.recv_cq = res.cq.cq();
  qp_init.qp_type = IBV_QPT_UD;
  qp_init.sq_sig_all = 1;  // every send completes: its CQE carries timestamp (2)
  qp_init.cap.max_send_wr = options_.send_queue_depth;
  qp_init.cap.max_recv_wr = recv_depth;
  qp_init.cap.max_send_sge = 1;
  qp_init.cap.max_recv_sge = 1;
  errno = 0;
  UniqueQp qp(ibv_create_qp(res.pd.get(), &qp_init));
  if (!qp) return ErrnoError("ibv_create_qp" + where, errno ? errno : ENOMEM);

  if (auto up = BringUpQp(qp.get(), nic, where); !up) return up.error();
  return qp;
}

// RESET -> INIT -> RTR -> RTS. UD needs no peer: INIT binds port and Q_Key,
// RTR and RTS just enable. Also how a QP in the error state comes back.
VerbsStatus VerbsTransport::BringUpQp(ibv_qp* qp, const Nic& nic, const std::string& where) {
  ibv_qp_attr attr{};
  if (qp->state != IBV_QPS_RESET) {
    attr.qp_state = IBV_QPS_RESET;
    if (int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE); rc != 0) {
      return ErrnoError("ibv_modify_qp(RESET)" + where, rc);
    }
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = nic.config.port;
  attr.qkey = options_.qkey;
  if (int rc =
          ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
      rc != 0) {
    return ErrnoError("ibv_modify_qp(INIT)" + where, rc);
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTR;
  if (int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE); rc != 0) {
    return ErrnoError("ibv_modify_qp(RTR)" + where, rc);
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;
  if (int rc = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN); rc != 0) {
    return ErrnoError("ibv_modify_qp(RTS)" + where, rc);
  }
  return VerbsOk{};
}

VerbsStatus VerbsTransport::PostReceive(Nic& nic, std::uint32_t slot) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(nic.recv_slot(slot));
  sge.length = nic.recv_slot_bytes;
  sge.lkey = nic.res.mr.get()->lkey;
  ibv_recv_wr wr{};
  wr.wr_id = WrId(kRecvKind, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(nic.res.qp.get(), &wr, &bad); rc != 0) {
    return ErrnoError("ibv_post_recv(" + nic.config.rdma_device + ")", rc);
  }
  nic.recv_level.OnPosted();
  return VerbsOk{};
}

// Posts `payload` from send slot `slot` of `src` to `dst`'s receive QP;
// `app_send` is taken just before the post. The verbs error, or 0.
int VerbsTransport::PostSend(Nic& src, const Nic& dst, ibv_qp* qp, ibv_ah* ah, std::uint32_t slot,
                             std::span<const std::uint8_t> payload, Timestamp* app_send) {
  std::memcpy(src.send_slot(slot), payload.data(), payload.size());
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(src.send_slot(slot));
  sge.length = static_cast<std::uint32_t>(payload.size());
  sge.lkey = src.res.mr.get()->lkey;
  ibv_send_wr wr{};
  wr.wr_id = WrId(kSendKind, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = dst.qpn;
  wr.wr.ud.remote_qkey = options_.qkey;
  ibv_send_wr* bad = nullptr;

  *app_send = Timestamp{Ns(clock_.RealtimeNow()), TimestampSource::kUser};
  return ibv_post_send(qp, &wr, &bad);
}

SendResult VerbsTransport::Send(const ProbeOrder& order, std::span<const std::uint8_t> payload) {
  SendResult result;
  if (order.src >= nics_.size()) {
    result.error = EINVAL;
    return result;
  }
  VerbsNicStats& stats = stats_[order.src];
  auto fail = [&](SendStatus status, int error) {
    ++(status == SendStatus::kRetryLater ? stats.sends_retry_later : stats.sends_failed);
    result.status = status;
    result.error = error;
    return result;
  };
  if (!is_open(order.src) || !is_open(order.dst)) return fail(SendStatus::kFailed, ENOTCONN);
  Nic& src = *nics_[order.src];
  const Nic& dst = *nics_[order.dst];
  if (payload.size() > src.max_payload) return fail(SendStatus::kFailed, EMSGSIZE);
  // A NIC whose port is down (or whose device failed) does not probe: refused
  // at once, so the probe is a send failure, not a timeout (nic_health.h).
  if (!src.health->can_send()) {
    ++stats.sends_nic_down;
    return fail(SendStatus::kFailed, ENETDOWN);
  }
  const std::optional<std::uint32_t> label = FlowLabelForUdpSport(order.src_port);
  // Ports below 49152 cannot be expressed as a flow label (see flow_label.h).
  if (!label) return fail(SendStatus::kFailed, EINVAL);
  // A per-QP device sends only from the ports OpenNic offered.
  const std::optional<std::uint32_t> qp_index = src.SendQp(order.src_port);
  if (!qp_index) return fail(SendStatus::kFailed, EADDRNOTAVAIL);
  // A QP being reset, or the destination's receive QP: either would lose the
  // probe on this host, which is no network loss.
  if (!src.health->qp_ready(*qp_index) || !dst.health->qp_ready(0)) {
    ++stats.sends_qp_recovering;
    return fail(SendStatus::kFailed, EIO);
  }
  ibv_qp* qp = src.QpAt(*qp_index);
  if (src.free_send_slots.empty()) return fail(SendStatus::kRetryLater, EAGAIN);

  // Where the QP fixes the port the label changes nothing on the wire: one AH
  // per destination. Built ahead on the builder thread (address_handle_book.h),
  // never here: a handle not built yet means this probe is not sent.
  const AddressHandleKey key{order.dst, src.port_mode == SourcePortMode::kPerQp ? 0 : *label};
  const auto found = src.res.ahs.ForSend(key, clock_.MonotonicNow());
  if (found.request) RequestAddressHandle(src, key);
  if (found.state == BasicAddressHandleBook<UniqueAh>::State::kWaiting) {
    ++stats.sends_waiting_for_ah;
    return fail(SendStatus::kRetryLater, EAGAIN);
  }
  if (found.state == BasicAddressHandleBook<UniqueAh>::State::kFailed) {
    return fail(SendStatus::kFailed, found.error);
  }
  ibv_ah* ah = found.ah;

  const std::uint32_t slot = src.free_send_slots.back();
  if (int rc = PostSend(src, dst, qp, ah, slot, payload, &result.app_send); rc != 0) {
    // ENOMEM is a full send queue; anything else means the QP cannot send.
    return fail(rc == ENOMEM ? SendStatus::kRetryLater : SendStatus::kFailed, rc);
  }
  src.free_send_slots.pop_back();
  src.send_slots[slot] = Nic::SendSlot{order.sequence, key, *qp_index, true};
  src.res.ahs.AddInFlight(key);
  ++stats.sends_posted;
  result.status = SendStatus::kOk;
  result.nic_send_pending = true;
  return result;
}

}  // namespace hostmesh::agent::verbs
