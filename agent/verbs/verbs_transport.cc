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
#include "common/base/logging.h"

namespace hostmesh::agent::verbs {
namespace {

// UD receives start with the 40-byte GRH (or the IPv4 header padded to it).
constexpr std::uint32_t kGrhBytes = 40;
// wr_id = kind << 32 | slot, so a completion names its buffer and direction.
constexpr std::uint64_t kRecvKind = 1;
constexpr std::uint64_t kSendKind = 2;
// epoll data of the wake-up eventfd; NIC channels carry their NicId, NIC
// async fds their NicId with kAsyncTag set.
constexpr std::uint32_t kWakeTag = 0xFFFFFFFF;
constexpr std::uint32_t kAsyncTag = 0x80000000;

std::uint64_t WrId(std::uint64_t kind, std::uint32_t slot) {
  return kind << 32 | slot;
}
std::int64_t Ns(WallTime t) {
  return t.time_since_epoch().count();
}

std::string GidText(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
  return text;
}

std::uint32_t MtuBytes(ibv_mtu mtu) {
  return 128u << static_cast<unsigned>(mtu);
}

std::shared_ptr<spdlog::logger> Log() {
  return GetLogger("verbs");
}

}  // namespace

struct VerbsTransport::RealVerbsTraits {
  using Context = UniqueContext;
  using CompChannel = UniqueCompChannel;
  using Pd = UniquePd;
  using Buffer = std::vector<std::uint8_t>;
  using Mr = UniqueMr;
  using Cq = CompletionQueue;
  using Qp = UniqueQp;
  using AhCache = BasicAddressHandleBook<UniqueAh>;
};

// A job of the address-handle builder thread: everything ibv_create_ah
// needs, copied, plus what tells whether its NIC is still the same.
struct VerbsTransport::AhJob {
  NicId src = 0;
  std::uint64_t generation = 0;  // Nic::generation when submitted
  AddressHandleKey key;
  ibv_pd* pd = nullptr;  // the NIC's; Reopen forgets its jobs before freeing it
  ibv_ah_attr attr{};
};
struct VerbsTransport::AhBuilt {
  NicId src = 0;
  std::uint64_t generation = 0;
  AddressHandleKey key;
  UniqueAh ah;
  int error = 0;
};

struct VerbsTransport::Nic {
  struct SendSlot {
    std::uint64_t sequence = 0;
    AddressHandleKey key;
    std::uint32_t qp = 0;  // index (QpAt) of the QP it was posted on
    bool busy = false;     // posted, completion not seen yet
  };

  NicId id = 0;
  std::uint64_t generation = 0;  // one per Build: a reopened NIC is a new one
  VerbsNicOptions config;
  BasicNicResources<RealVerbsTraits> res;
  ibv_gid gid{};
  std::uint32_t qpn = 0;
  std::uint32_t max_payload = 0;
  std::uint32_t recv_slot_bytes = 0;
  std::uint32_t recv_slots = 0;
  ReceiveQueueLevel recv_level;  // posted receives of res.qp (queue_sizing.h)
  std::vector<SendSlot> send_slots;
  std::vector<std::uint32_t> free_send_slots;
  std::optional<ClockFit> clock;  // when CQEs carry raw ticks
  std::chrono::nanoseconds sample_period{};
  MonoTime next_sample{};
  bool warned_sample_error = false;
  SourcePortMode port_mode = SourcePortMode::kFlowLabel;
  // kPerQp: the send QPs (after `res`, so they go before its CQ) and, sorted
  // by port, the index (QpAt) of the QP that sends from each port.
  std::vector<UniqueQp> send_qps;
  std::vector<std::pair<std::uint16_t, std::uint32_t>> qp_for_port;
  // Async events and QP recovery; QP index 0 is res.qp, i > 0 send_qps[i - 1].
  // Points into VerbsTransport::health_, which outlives a reopen.
  NicHealth* health = nullptr;
  bool port_active_at_open = false;

  ibv_qp* QpAt(std::uint32_t index) const {
    return index == 0 ? res.qp.get() : send_qps[index - 1].get();
  }
  std::optional<std::uint32_t> QpIndex(const ibv_qp* qp) const {
    if (qp == res.qp.get()) return 0;
    for (std::size_t i = 0; i < send_qps.size(); ++i) {
      if (send_qps[i].get() == qp) return static_cast<std::uint32_t>(i + 1);
    }
    return std::nullopt;
  }
  // The QP index that sends from `port`; nullopt when no QP can.
  // The ports the agent said this NIC will send from (PrepareSourcePorts).
  std::vector<std::uint16_t> prepared_ports;
  bool warned_ah_error = false;

  std::optional<std::uint32_t> SendQp(std::uint16_t port) const {
    if (port_mode == SourcePortMode::kFlowLabel) return 0;
    auto it = std::lower_bound(qp_for_port.begin(), qp_for_port.end(),
                               std::pair<std::uint16_t, std::uint32_t>{port, 0});
    if (it == qp_for_port.end() || it->first != port) return std::nullopt;
    return it->second;
  }

  std::uint8_t* recv_slot(std::uint32_t slot) {
    return res.buffer.data() + std::size_t{slot} * recv_slot_bytes;
  }
  std::uint8_t* send_slot(std::uint32_t slot) {
    return res.buffer.data() + std::size_t{recv_slots} * recv_slot_bytes +
           std::size_t{slot} * max_payload;
  }
};

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
  const std::string& dev_name = cfg.rdma_device;

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

  auto nic = std::make_unique<Nic>();
  nic->id = id;
  nic->config = cfg;
  auto& res = nic->res;
  const std::string where = "(" + dev_name + " port " + std::to_string(cfg.port) + ")";

  errno = 0;
  res.context = UniqueContext(ibv_open_device(device));
  if (!res.context) return ErrnoError("ibv_open_device" + where, errno ? errno : ENODEV);
  ibv_context* ctx = res.context.get();

  ibv_device_attr_ex dev_attr{};
  if (int rc = ibv_query_device_ex(ctx, nullptr, &dev_attr); rc != 0) {
    return ErrnoError("ibv_query_device_ex" + where, rc);
  }
  ibv_port_attr port_attr{};
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
    nic->gid = checked.value();
  }
  // A UD message is at most one MTU; larger probes could never be received.
  nic->max_payload = std::min(options_.max_payload_bytes, MtuBytes(port_attr.active_mtu));

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

  // Sized for the probe rate (queue_sizing.h) but never past what the device allows.
  nic->recv_slots = options_.recv_queue_depth;
  if (const auto max_wr = static_cast<std::uint32_t>(std::max(dev_attr.orig_attr.max_qp_wr, 1));
      nic->recv_slots > max_wr) {
    Log()->warn(
        "nic {}: {} allows {} receives per QP, fewer than the {} the probe rate wants; "
        "probes arriving during a long poll stall may be dropped",
        cfg.name, where, max_wr, nic->recv_slots);
    nic->recv_slots = max_wr;
  }
  nic->recv_slot_bytes = kGrhBytes + nic->max_payload;
  res.buffer.resize(std::size_t{nic->recv_slots} * nic->recv_slot_bytes +
                    std::size_t{options_.send_queue_depth} * nic->max_payload);
  errno = 0;
  res.mr = UniqueMr(
      ibv_reg_mr(res.pd.get(), res.buffer.data(), res.buffer.size(), IBV_ACCESS_LOCAL_WRITE));
  if (!res.mr) return ErrnoError("ibv_reg_mr" + where, errno ? errno : ENOMEM);

  const bool want_timestamps =
      options_.use_completion_timestamps && dev_attr.completion_timestamp_mask != 0;
  const int cq_entries = static_cast<int>(options_.send_queue_depth + nic->recv_slots);
  auto cq = CompletionQueue::Create(ctx, res.channel.get(), cq_entries, want_timestamps, dev_name);
  if (!cq) return cq.error();
  res.cq = std::move(cq).value();

  auto qp = CreateUdQp(*nic, nic->recv_slots, where);
  if (!qp) return qp.error();
  res.qp = std::move(qp).value();
  nic->qpn = res.qp.get()->qp_num;

  // Where the device fixes the source port per QP, probes leave from a pool
  // of send-only QPs, one per port; the receive QP above only receives.
  nic->port_mode = SourcePortModeForVendor(dev_attr.orig_attr.vendor_id);
  if (nic->port_mode == SourcePortMode::kPerQp) {
    for (std::uint32_t i = 0; i < options_.source_qps; ++i) {
      auto send_qp = CreateUdQp(*nic, 1, where);
      if (!send_qp) return send_qp.error();
      const std::uint16_t port = RxeQpSourcePort(send_qp.value().get()->qp_num);
      const bool taken = std::any_of(nic->qp_for_port.begin(), nic->qp_for_port.end(),
                                     [&](const auto& entry) { return entry.first == port; });
      nic->send_qps.push_back(std::move(send_qp).value());
      if (!taken) {
        nic->qp_for_port.emplace_back(port, static_cast<std::uint32_t>(nic->send_qps.size()));
      }
    }
    std::sort(nic->qp_for_port.begin(), nic->qp_for_port.end());
  }

  nic->port_active_at_open = port_attr.state == IBV_PORT_ACTIVE;
  if (!health_[id]) {
    health_[id].emplace(static_cast<std::uint32_t>(1 + nic->send_qps.size()),
                        nic->port_active_at_open, clock_.MonotonicNow());
  }
  nic->health = &*health_[id];
  res.ahs = BasicAddressHandleBook<UniqueAh>(options_.max_address_handles);
  nic->generation = ++nic_generations_;
  for (std::uint32_t slot = 0; slot < nic->recv_slots; ++slot) {
    if (auto posted = PostReceive(*nic, slot); !posted) return posted.error();
  }
  nic->send_slots.resize(options_.send_queue_depth);
  for (std::uint32_t slot = options_.send_queue_depth; slot > 0; --slot) {
    nic->free_send_slots.push_back(slot - 1);
  }
  if (int rc = ibv_req_notify_cq(res.cq.cq(), 0); rc != 0) {
    return ErrnoError("ibv_req_notify_cq" + where, rc);
  }

  const CompletionTimestampMode mode = res.cq.mode();
  if (res.cq.has_raw_timestamps() && dev_attr.hca_core_clock != 0) {
    ClockFitOptions fit;
    fit.nic_clock_khz = dev_attr.hca_core_clock;
    fit.counter_mask = dev_attr.completion_timestamp_mask;
    fit.window = options_.clock_window;
    fit.fit_samples = options_.clock_fit_samples;
    nic->clock.emplace(fit);
    nic->sample_period = options_.clock_sample_period;
    // Unwrapping needs a sample at least every half counter period.
    if (auto half = nic->clock->half_wrap_period_ns()) {
      nic->sample_period = std::min(nic->sample_period, std::chrono::nanoseconds{*half / 2});
    }
    SampleClock(*nic);
  } else if (mode == CompletionTimestampMode::kRawClock) {
    Log()->warn("nic {}: {} has completion timestamps but no core clock frequency", cfg.name,
                where);
  }
  if (mode == CompletionTimestampMode::kNone ||
      (mode == CompletionTimestampMode::kRawClock && !nic->clock)) {
    Log()->warn(
        "nic {}: {} gives no usable completion timestamps (mask {:#x}); timestamps (2) and (3) "
        "are software poll times, reported as source USER",
        cfg.name, where, dev_attr.completion_timestamp_mask);
  }

  // Port changes, fatal QPs and device errors arrive on the context's async
  // fd (nic_health.h); read without blocking whenever it is readable.
  const int async_fd = ctx->async_fd;
  if (fcntl(async_fd, F_SETFL, fcntl(async_fd, F_GETFL) | O_NONBLOCK) != 0) {
    return ErrnoError("fcntl(O_NONBLOCK) on the async event fd" + where, errno);
  }
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

  result.app_send = Timestamp{Ns(clock_.RealtimeNow()), TimestampSource::kUser};
  if (int rc = ibv_post_send(qp, &wr, &bad); rc != 0) {
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

void VerbsTransport::SampleClock(Nic& nic) {
  VerbsNicStats& stats = stats_[nic.id];
  for (std::uint32_t i = 0; i < options_.clock_samples_per_round; ++i) {
    ibv_values_ex values{};
    values.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
    const std::int64_t before = Ns(clock_.RealtimeNow());
    const int rc = ibv_query_rt_values_ex(nic.res.context.get(), &values);
    const std::int64_t after = Ns(clock_.RealtimeNow());
    if (rc != 0) {
      ++stats.clock_sample_errors;
      if (!std::exchange(nic.warned_sample_error, true)) {
        Log()->warn("nic {}: ibv_query_rt_values_ex failed: {}; NIC timestamps stay unmapped",
                    nic.config.name, std::strerror(rc));
      }
      break;
    }
    // Providers put the raw tick count in the timespec (mlx5: all of it in tv_nsec).
    const std::uint64_t raw = static_cast<std::uint64_t>(values.raw_clock.tv_sec) * 1'000'000'000u +
                              static_cast<std::uint64_t>(values.raw_clock.tv_nsec);
    if (nic.clock->AddSample(ClockSample{before, raw, after})) {
      ++stats.clock_samples;
    } else {
      ++stats.clock_sample_errors;
    }
  }
  nic.next_sample = clock_.MonotonicNow() + nic.sample_period;
}

void VerbsTransport::DrainReadyFd() {
  if (!epoll_.valid()) return;
  std::array<epoll_event, 16> ready{};
  const int n = epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), 0);
  for (int i = 0; i < n; ++i) {
    const std::uint32_t tag = ready[static_cast<std::size_t>(i)].data.u32;
    if (tag == kWakeTag) {
      std::uint64_t count = 0;
      [[maybe_unused]] const auto got = read(wake_.get(), &count, sizeof(count));
      continue;
    }
    if ((tag & kAsyncTag) != 0) {
      if (is_open(tag & ~kAsyncTag)) ReadAsyncEvents(*nics_[tag & ~kAsyncTag]);
      continue;
    }
    if (!is_open(tag)) continue;
    Nic& nic = *nics_[tag];
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    // Ack at once: ibv_destroy_cq waits for every event it handed out.
    while (ibv_get_cq_event(nic.res.channel.get(), &cq, &context) == 0) ibv_ack_cq_events(cq, 1);
    // Re-arm before polling (Poll polls every CQ after this), so a completion
    // landing in between still raises an event.
    ibv_req_notify_cq(nic.res.cq.cq(), 0);
  }
}

void VerbsTransport::ReadAsyncEvents(Nic& nic) {
  const MonoTime now = clock_.MonotonicNow();
  ibv_async_event event{};
  while (ibv_get_async_event(nic.res.context.get(), &event) == 0) {
    AsyncEventKind kind = ClassifyAsyncEvent(event.event_type);
    std::optional<std::uint32_t> qp;
    switch (event.event_type) {
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_COMM_EST:
      case IBV_EVENT_SQ_DRAINED:
      case IBV_EVENT_PATH_MIG:
      case IBV_EVENT_PATH_MIG_ERR:
      case IBV_EVENT_QP_LAST_WQE_REACHED:
        qp = nic.QpIndex(event.element.qp);
        break;
      case IBV_EVENT_PORT_ACTIVE:
      case IBV_EVENT_PORT_ERR:
      case IBV_EVENT_LID_CHANGE:
      case IBV_EVENT_PKEY_CHANGE:
      case IBV_EVENT_SM_CHANGE:
      case IBV_EVENT_CLIENT_REREGISTER:
      case IBV_EVENT_GID_CHANGE:
        // Another port of the device is not this NIC's business.
        if (event.element.port_num != nic.config.port) kind = AsyncEventKind::kOther;
        break;
      default:
        break;
    }
    if (kind == AsyncEventKind::kOther) {
      Log()->info("nic {}: async event {}", nic.config.name, ibv_event_type_str(event.event_type));
    } else {
      Log()->warn("nic {}: async event {}{}", nic.config.name, ibv_event_type_str(event.event_type),
                  kind == AsyncEventKind::kPortDown     ? ": probing from it pauses"
                  : kind == AsyncEventKind::kPortActive ? ": probing from it resumes"
                  : kind == AsyncEventKind::kQpFatal
                      ? ": the QP will be reset"
                      : ": the NIC stops sending until it is reopened");
    }
    nic.health->OnEvent(kind, qp, now);
    ibv_ack_async_event(&event);
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK) {
    ++stats_[nic.id].async_event_errors;
    Log()->warn("nic {}: ibv_get_async_event: {}", nic.config.name, std::strerror(errno));
  }
}

void VerbsTransport::CheckQpAfterError(Nic& nic, std::uint32_t qp_index) {
  if (!nic.health->qp_ready(qp_index)) return;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(nic.QpAt(qp_index), &attr, IBV_QP_STATE, &init) != 0) return;
  if (attr.qp_state == IBV_QPS_ERR || attr.qp_state == IBV_QPS_SQE) {
    Log()->warn("nic {}: QP {:#x} found in state {} after an error completion; resetting it",
                nic.config.name, nic.QpAt(qp_index)->qp_num,
                attr.qp_state == IBV_QPS_ERR ? "ERR" : "SQE");
    nic.health->OnQpFoundInError(qp_index, clock_.MonotonicNow());
  }
}

bool VerbsTransport::RecoverQp(Nic& nic, std::uint32_t qp_index) {
  ibv_qp* qp = nic.QpAt(qp_index);
  const std::string where =
      "(" + nic.config.rdma_device + " qpn " + std::to_string(qp->qp_num) + ")";
  if (auto up = BringUpQp(qp, nic, where); !up) {
    Log()->warn("nic {}: QP recovery failed: {}; retrying later", nic.config.name,
                up.error().message);
    return false;
  }
  // The reset dropped whatever was still queued: sends still in flight on
  // this QP are reported failed, and the receive QP gets its buffers back.
  const std::size_t dropped = FailInFlight(nic, qp_index, IBV_WC_WR_FLUSH_ERR);
  if (qp_index == 0) {
    nic.recv_level.Reset(0);  // the reset dropped every posted receive
    for (std::uint32_t slot = 0; slot < nic.recv_slots; ++slot) {
      if (auto posted = PostReceive(nic, slot); !posted) {
        ++stats_[nic.id].receive_repost_failures;
        Log()->warn("nic {}: reposting receives after the reset: {}", nic.config.name,
                    posted.error().message);
        return false;
      }
    }
  }
  Log()->warn("nic {}: QP {:#x} reset and back in RTS ({} sends in flight reported failed)",
              nic.config.name, qp->qp_num, dropped);
  return true;
}

std::string VerbsTransport::ForceQpError(NicId nic, std::uint32_t qp_index) {
  if (!is_open(nic)) return "NIC " + std::to_string(nic) + " is not open";
  Nic& n = *nics_[nic];
  if (qp_index > n.send_qps.size()) {
    return "nic " + n.config.name + " has QPs 0.." + std::to_string(n.send_qps.size()) + ", not " +
           std::to_string(qp_index);
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  if (int rc = ibv_modify_qp(n.QpAt(qp_index), &attr, IBV_QP_STATE); rc != 0) {
    return "ibv_modify_qp(ERR) on nic " + n.config.name + ": " + std::strerror(rc);
  }
  Log()->warn("nic {}: QP {:#x} forced into the error state (debug hook)", n.config.name,
              n.QpAt(qp_index)->qp_num);
  return "";
}

std::size_t VerbsTransport::FailInFlight(Nic& nic, std::optional<std::uint32_t> qp_index,
                                         int error) {
  std::size_t dropped = 0;
  for (std::uint32_t slot = 0; slot < nic.send_slots.size(); ++slot) {
    Nic::SendSlot& sent = nic.send_slots[slot];
    if (!sent.busy || (qp_index && sent.qp != *qp_index)) continue;
    sent.busy = false;
    nic.free_send_slots.push_back(slot);
    nic.res.ahs.ReleaseInFlight(sent.key);
    TransportEvent ev;
    ev.kind = TransportEvent::Kind::kSendFailed;
    ev.nic = nic.id;
    ev.sequence = sent.sequence;
    ev.error = error;
    backlog_.push_back(std::move(ev));
    ++dropped;
  }
  return dropped;
}

// Closes a NIC whose device or CQ failed and opens it again (nic_health.h).
// Its in-flight probes died with the CQ: reported as send failures.
void VerbsTransport::Reopen(NicId id, MonoTime now) {
  NicHealth& health = *health_[id];
  const VerbsNicOptions& cfg = options_.nics[id];
  std::size_t dropped = 0;
  if (is_open(id)) {
    dropped = FailInFlight(*nics_[id], std::nullopt, IBV_WC_WR_FLUSH_ERR);
    // The builder may be using its PD and holds handles of it: both go first.
    if (ah_builder_) ah_builder_->Forget([id](const auto& x) { return x.src == id; });
    nics_[id].reset();  // closing its fds takes them out of the epoll set
    open_order_.erase(std::remove(open_order_.begin(), open_order_.end(), id), open_order_.end());
  }
  // Listed again: a device that was unregistered and registered anew (driver
  // reload, reset) is another ibv_device. Open contexts hold their own.
  device_list_ = UniqueDeviceList();
  device_count_ = 0;
  auto built = Build(id);
  if (!built) {
    health.OnReopen(false, 0, false, now);
    Log()->warn(
        "nic {}: reopening {} failed (attempt {}): {}; trying again in {} ms", cfg.name,
        cfg.rdma_device, health.counters().reopen_failures, built.error().message,
        health.NextDue()
            ? std::chrono::duration_cast<std::chrono::milliseconds>(*health.NextDue() - now).count()
            : 0);
    return;
  }
  nics_[id] = std::move(built).value();
  open_order_.push_back(id);
  Nic& nic = *nics_[id];
  health.OnReopen(true, static_cast<std::uint32_t>(1 + nic.send_qps.size()),
                  nic.port_active_at_open, now);
  reopened_.push_back(id);
  PrebuildAddressHandles(nic);
  Log()->warn(
      "nic {}: {} reopened after a device or CQ error ({} sends in flight reported failed); "
      "probing from it resumes{}",
      cfg.name, cfg.rdma_device, dropped,
      nic.port_mode == SourcePortMode::kPerQp ? " from the new send QPs' ports" : "");
}

std::vector<NicId> VerbsTransport::TakeReopened() {
  return std::exchange(reopened_, {});
}

std::string VerbsTransport::ForceDeviceError(NicId nic) {
  if (!is_open(nic)) return "NIC " + std::to_string(nic) + " is not open";
  Log()->warn(
      "nic {}: device taken as failed (debug hook): the NIC stops sending until it is "
      "reopened",
      nics_[nic]->config.name);
  health_[nic]->OnEvent(AsyncEventKind::kDeviceFatal, std::nullopt, clock_.MonotonicNow());
  return "";
}

void VerbsTransport::MaintainHealth(NicId id) {
  if (!health_[id]) return;  // never opened
  NicHealth& health = *health_[id];
  const MonoTime now = clock_.MonotonicNow();
  if (health.ReopenDue(now)) {
    Reopen(id, now);
    return;
  }
  if (!is_open(id)) return;
  Nic& nic = *nics_[id];
  if (health.PortCheckDue(now)) {
    ibv_port_attr attr{};
    if (ibv_query_port(nic.res.context.get(), nic.config.port, &attr) == 0) {
      const bool active = attr.state == IBV_PORT_ACTIVE;
      if (active) {
        Log()->warn("nic {}: port {} is active again (found by query); probing from it resumes",
                    nic.config.name, nic.config.port);
      }
      health.OnPortState(active, now);
    }
  }
  for (std::uint32_t qp : health.RecoveryDue(now)) health.OnRecovery(qp, RecoverQp(nic, qp), now);
}

void VerbsTransport::WakeLater() {
  if (!wake_.valid()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto put = write(wake_.get(), &one, sizeof(one));
}

std::size_t VerbsTransport::Poll(std::vector<TransportEvent>& out, std::size_t max_events) {
  // Not only when some NIC is open: a NIC whose reopen failed is retried here.
  if (max_events == 0 || nics_.empty()) return 0;
  DrainReadyFd();
  CollectAddressHandles();
  const MonoTime now = clock_.MonotonicNow();
  for (NicId id : open_order_) {
    Nic& nic = *nics_[id];
    if (nic.clock && now >= nic.next_sample) SampleClock(nic);
  }
  const std::size_t before = out.size();
  bool left_work = false;
  if (!backlog_.empty()) {
    const std::size_t take = std::min(max_events, backlog_.size());
    std::move(backlog_.begin(), backlog_.begin() + static_cast<std::ptrdiff_t>(take),
              std::back_inserter(out));
    backlog_.erase(backlog_.begin(), backlog_.begin() + static_cast<std::ptrdiff_t>(take));
    left_work = !backlog_.empty();
  }
  const std::size_t n = nics_.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t appended = out.size() - before;
    if (appended >= max_events) {
      left_work = true;
      break;
    }
    const std::size_t id = (next_poll_nic_ + k) % n;
    // A failed CQ only returns errors until the NIC is reopened.
    if (nics_[id] && !nics_[id]->health->failed()) {
      PollNic(*nics_[id], out, max_events - appended, left_work);
    }
  }
  next_poll_nic_ = (next_poll_nic_ + 1) % n;
  // After the polls, so the flushed completions of a QP in error are read
  // before its reset discards what is left.
  for (NicId id = 0; id < health_.size(); ++id) MaintainHealth(id);
  if (!backlog_.empty()) left_work = true;
  // The completion channel only fires for new completions: whatever stays in
  // a CQ must keep the ready fd readable, or the loop would sleep on it.
  if (left_work) WakeLater();
  return out.size() - before;
}

Timestamp VerbsTransport::CompletionTime(Nic& nic, const Completion& c, std::int64_t poll_ns) {
  if (nic.res.cq.mode() == CompletionTimestampMode::kWallclock && c.wallclock_ns != 0) {
    return Timestamp{static_cast<std::int64_t>(c.wallclock_ns), TimestampSource::kHardware};
  }
  if (nic.clock) {
    if (auto host = nic.clock->ToHostNs(c.raw_ts))
      return Timestamp{*host, TimestampSource::kHardware};
    ++stats_[nic.id].unmapped_timestamps;
  }
  return Timestamp{poll_ns, TimestampSource::kUser};
}

void VerbsTransport::PollNic(Nic& nic, std::vector<TransportEvent>& out, std::size_t budget,
                             bool& left_work) {
  VerbsNicStats& stats = stats_[nic.id];
  std::array<Completion, 32> batch{};
  while (budget > 0) {
    const std::size_t want = std::min(budget, batch.size());
    const CqPollResult polled = nic.res.cq.Poll(std::span(batch.data(), want));
    // The software stand-in for (2) and (3): when the application learned of them.
    const std::int64_t poll_ns = Ns(clock_.RealtimeNow());
    for (std::size_t i = 0; i < polled.count; ++i) {
      const Completion& c = batch[i];
      const auto slot = static_cast<std::uint32_t>(c.wr_id & 0xFFFFFFFFu);
      const std::uint64_t kind = c.wr_id >> 32;
      if (kind == kSendKind && slot < nic.send_slots.size()) {
        const Nic::SendSlot sent = nic.send_slots[slot];
        if (!sent.busy) {
          // Its QP was reset after the probe had been reported failed.
          ++stats.stale_completions;
          continue;
        }
        nic.send_slots[slot].busy = false;
        nic.free_send_slots.push_back(slot);
        nic.res.ahs.ReleaseInFlight(sent.key);
        TransportEvent ev;
        ev.nic = nic.id;
        ev.sequence = sent.sequence;
        if (c.status == IBV_WC_SUCCESS) {
          ev.kind = TransportEvent::Kind::kSendTimestamp;
          ev.nic_time = CompletionTime(nic, c, poll_ns);
        } else {
          ++stats.send_completion_errors;
          ev.kind = TransportEvent::Kind::kSendFailed;
          ev.error = static_cast<int>(c.status);
          Log()->debug("nic {}: send {} failed: {} (vendor {:#x})", nic.config.name, sent.sequence,
                       ibv_wc_status_str(c.status), c.vendor_err);
          // An error completion may have put the QP in the error state (and a
          // flush says it is there), whether or not the device raises an event.
          CheckQpAfterError(nic, sent.qp);
        }
        out.push_back(std::move(ev));
      } else if (kind == kRecvKind && slot < nic.recv_slots) {
        if (c.status != IBV_WC_WR_FLUSH_ERR && nic.recv_level.OnConsumed()) {
          // Every posted receive was used before this poll: whatever arrived
          // after the last one was dropped by the device, unseen.
          if (stats.receive_queue_empty++ == 0) {
            Log()->warn(
                "nic {}: its receive queue ran empty ({} receives used between two polls); probes "
                "arriving then were dropped and read as loss: the agent polls too late (CPU?)",
                nic.config.name, nic.recv_slots);
          }
        }
        if (c.status == IBV_WC_SUCCESS && c.byte_len >= kGrhBytes) {
          ++stats.receives;
          TransportEvent ev;
          ev.kind = TransportEvent::Kind::kReceived;
          ev.nic = nic.id;
          ev.nic_time = CompletionTime(nic, c, poll_ns);
          const std::uint8_t* data = nic.recv_slot(slot) + kGrhBytes;
          ev.payload.assign(data, data + (c.byte_len - kGrhBytes));
          ev.app_time = Timestamp{Ns(clock_.RealtimeNow()), TimestampSource::kUser};
          out.push_back(std::move(ev));
        } else {
          ++stats.receive_errors;
          if (c.status != IBV_WC_SUCCESS) CheckQpAfterError(nic, 0);
        }
        // A flushed receive means the QP is in error: reposting would only flush again.
        if (c.status != IBV_WC_WR_FLUSH_ERR && !PostReceive(nic, slot)) {
          ++stats.receive_repost_failures;
        }
      }
    }
    budget -= polled.count;
    if (polled.error == EBUSY) {
      ++stats.poll_busy;
      left_work = true;
      return;
    }
    if (polled.error != 0) {
      ++stats.poll_errors;
      Log()->warn("nic {}: polling the CQ failed: {}", nic.config.name,
                  std::strerror(polled.error));
      return;
    }
    if (polled.count < want) return;  // drained
  }
  left_work = true;
}

}  // namespace hostmesh::agent::verbs
