#include "agent/telemetry/sysfs_readers.h"

#include <array>
#include <string>

namespace hostmesh::agent::telemetry {
namespace {

// One counter of an RDMA port: the files that may hold it, first found wins
// (IB PMA counters/ first, then the names of mlx5's and rxe's hw_counters/).
struct RdmaSource {
  NicCounter counter;
  std::array<std::string_view, 2> files;
  std::uint64_t scale = 1;
};

constexpr RdmaSource kRdmaSources[] = {
    {NicCounter::kLinkDowned, {"counters/link_downed", "hw_counters/link_downed"}},
    {NicCounter::kSymbolError, {"counters/symbol_error", ""}},
    {NicCounter::kPortRcvErrors, {"counters/port_rcv_errors", ""}},
    {NicCounter::kPortXmitDiscards, {"counters/port_xmit_discards", ""}},
    // In 4-byte words (IBTA PortRcvData/PortXmitData), exported in bytes.
    {NicCounter::kPortRcvDataBytes, {"counters/port_rcv_data", ""}, 4},
    {NicCounter::kPortXmitDataBytes, {"counters/port_xmit_data", ""}, 4},
    {NicCounter::kOutOfSequence, {"hw_counters/out_of_sequence", "hw_counters/out_of_seq_request"}},
    {NicCounter::kPacketSeqErr, {"hw_counters/packet_seq_err", "hw_counters/rcvd_seq_err"}},
    {NicCounter::kLocalAckTimeoutErr, {"hw_counters/local_ack_timeout_err", ""}},
    {NicCounter::kNpCnpSent, {"hw_counters/np_cnp_sent", ""}},
    {NicCounter::kRpCnpHandled, {"hw_counters/rp_cnp_handled", ""}},
    {NicCounter::kRnrNakRetryErr,
     {"hw_counters/rnr_nak_retry_err", "hw_counters/retry_rnr_exceeded_err"}},
    // Every RoCE packet, probes included: on rxe the one counter that moves
    // with UD traffic (its others are about RC).
    {NicCounter::kPortRcvPackets, {"counters/port_rcv_packets", "hw_counters/rcvd_pkts"}},
    {NicCounter::kPortXmitPackets, {"counters/port_xmit_packets", "hw_counters/sent_pkts"}},
};

constexpr std::array<std::pair<NicCounter, std::string_view>, 3> kAerFiles = {{
    {NicCounter::kAerCorrectable, "aer_dev_correctable"},
    {NicCounter::kAerNonfatal, "aer_dev_nonfatal"},
    {NicCounter::kAerFatal, "aer_dev_fatal"},
}};

void Fail(NicReading& reading, Source source) {
  ++reading.failures[static_cast<std::size_t>(source)];
}

std::string Join(std::string_view dir, std::string_view file) {
  std::string path(dir);
  path.push_back('/');
  path.append(file);
  return path;
}

// A value that must parse when present: failures count against `source`.
template <typename T, typename Read>
bool ReadValue(NicReading& reading, Source source, Read read, T* out) {
  const ReadStatus status = read(out);
  if (status == ReadStatus::kFailed) Fail(reading, source);
  return status == ReadStatus::kOk;
}

}  // namespace

void ReadRdmaPort(const SysfsTree& sysfs, std::string_view device, std::uint32_t port,
                  NicReading& reading) {
  const std::string dir =
      "class/infiniband/" + std::string(device) + "/ports/" + std::to_string(port);
  if (!sysfs.IsDirectory(dir)) {
    Fail(reading, Source::kRdma);  // configured but gone: a removed or renamed device
    return;
  }
  for (const RdmaSource& source : kRdmaSources) {
    for (std::string_view file : source.files) {
      if (file.empty()) break;
      std::uint64_t value = 0;
      const ReadStatus status = sysfs.ReadU64(Join(dir, file), &value);
      if (status == ReadStatus::kAbsent) continue;
      if (status == ReadStatus::kOk) {
        reading[source.counter] = value * source.scale;
      } else {
        Fail(reading, Source::kRdma);
      }
      break;
    }
  }
  ReadValue(
      reading, Source::kRdma,
      [&](std::uint32_t* v) { return sysfs.ReadLeadingU32(Join(dir, "state"), v); },
      &reading.port_state);
  ReadValue(
      reading, Source::kRdma,
      [&](std::uint32_t* v) { return sysfs.ReadLeadingU32(Join(dir, "phys_state"), v); },
      &reading.phys_state);
}

void ReadNetdev(const SysfsTree& sysfs, std::string_view netdev, NicReading& reading) {
  const std::string dir = "class/net/" + std::string(netdev);
  if (!sysfs.IsDirectory(dir)) {
    Fail(reading, Source::kNetdev);
    return;
  }
  std::uint64_t changes = 0;
  if (ReadValue(
          reading, Source::kNetdev,
          [&](std::uint64_t* v) { return sysfs.ReadU64(Join(dir, "carrier_changes"), v); },
          &changes)) {
    reading[NicCounter::kCarrierChanges] = changes;
  }
  // operstate rather than carrier: reading carrier fails (EINVAL) while the
  // interface is administratively down, operstate always answers.
  std::string state;
  const ReadStatus status = sysfs.ReadText(Join(dir, "operstate"), &state);
  if (status == ReadStatus::kFailed) Fail(reading, Source::kNetdev);
  if (status != ReadStatus::kOk) return;
  while (!state.empty() && (state.back() == '\n' || state.back() == ' ')) state.pop_back();
  if (state == "up") {
    reading.carrier = Carrier::kUp;
  } else if (state == "down" || state == "lowerlayerdown" || state == "notpresent") {
    reading.carrier = Carrier::kDown;
  }
}

void ReadPcie(const SysfsTree& sysfs, std::string_view function_dir, NicReading& reading) {
  const std::string dir(function_dir);
  PcieLink link;
  std::string text;
  // A function without current_link_width is not PCIe (virtio, platform).
  const ReadStatus width = sysfs.ReadText(Join(dir, "current_link_width"), &text);
  if (width == ReadStatus::kAbsent) return;
  bool ok = width == ReadStatus::kOk && ParseLeadingU32(text, &link.current_width);
  ok = ok && sysfs.ReadLeadingU32(Join(dir, "max_link_width"), &link.max_width) == ReadStatus::kOk;
  ok = ok && sysfs.ReadText(Join(dir, "current_link_speed"), &text) == ReadStatus::kOk &&
       ParsePcieSpeedMts(text, &link.current_speed_mts);
  ok = ok && sysfs.ReadText(Join(dir, "max_link_speed"), &text) == ReadStatus::kOk &&
       ParsePcieSpeedMts(text, &link.max_speed_mts);
  if (ok) {
    reading.pcie = link;
  } else {
    Fail(reading, Source::kPcie);
  }
  for (const auto& [counter, file] : kAerFiles) {
    const ReadStatus status = sysfs.ReadText(Join(dir, file), &text);
    if (status == ReadStatus::kAbsent) continue;  // kernel without AER, or no capability
    std::uint64_t total = 0;
    if (status == ReadStatus::kOk && ParseAerTotal(text, &total)) {
      reading[counter] = total;
    } else {
      Fail(reading, Source::kPcie);
    }
  }
}

bool ParseAerTotal(std::string_view text, std::uint64_t* out) {
  std::uint64_t sum = 0;
  bool any = false;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const std::size_t space = line.rfind(' ');
    if (line.empty()) continue;
    if (space == std::string_view::npos) return false;
    std::uint64_t value = 0;
    if (!ParseU64(line.substr(space + 1), &value)) return false;
    if (line.starts_with("TOTAL_ERR_")) {
      *out = value;
      return true;
    }
    sum += value;
    any = true;
  }
  if (!any) return false;
  *out = sum;
  return true;
}

}  // namespace hostmesh::agent::telemetry
