#include "agent/telemetry/sysfs_readers.h"

#include <array>
#include <string>
#include <utility>

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

// What became of one value read through the gate.
enum class Outcome { kOk, kAbsent, kFailed, kHeld };

// Asks the gate, reads with `read(&why)`, counts a failure against `source`
// and tells the gate how it went.
template <typename Read>
Outcome Gated(ReadGate& gate, NicReading& reading, Source source, std::string_view item,
              Read read) {
  if (!gate.MayRead(source, item)) return Outcome::kHeld;
  std::string why;
  const ReadStatus status = read(&why);
  if (status == ReadStatus::kFailed) {
    Fail(reading, source);
    gate.Done(source, item, why.empty() ? std::string_view("unreadable") : std::string_view(why));
    return Outcome::kFailed;
  }
  gate.Done(source, item, {});
  return status == ReadStatus::kOk ? Outcome::kOk : Outcome::kAbsent;
}

// The device's own directory: false (and a failure) when it is configured but gone.
bool DeviceThere(const SysfsTree& sysfs, ReadGate& gate, NicReading& reading, Source source,
                 const std::string& dir, std::string_view missing) {
  if (!gate.MayRead(source, {})) return false;
  if (!sysfs.IsDirectory(dir)) {
    Fail(reading, source);  // a removed or renamed device
    gate.Done(source, {}, missing);
    return false;
  }
  gate.Done(source, {}, {});
  return true;
}

Outcome ReadPcieLink(const SysfsTree& sysfs, const std::string& dir, NicReading& reading,
                     ReadGate& gate) {
  return Gated(gate, reading, Source::kPcie, "link", [&](std::string* why) {
    PcieLink link;
    std::string text;
    // A function without current_link_width is not PCIe (virtio, platform).
    const ReadStatus width = sysfs.ReadText(Join(dir, "current_link_width"), &text, why);
    if (width != ReadStatus::kOk) return width;
    bool ok = ParseLeadingU32(text, &link.current_width);
    ok = ok &&
         sysfs.ReadLeadingU32(Join(dir, "max_link_width"), &link.max_width, why) == ReadStatus::kOk;
    ok = ok && sysfs.ReadText(Join(dir, "current_link_speed"), &text, why) == ReadStatus::kOk &&
         ParsePcieSpeedMts(text, &link.current_speed_mts);
    ok = ok && sysfs.ReadText(Join(dir, "max_link_speed"), &text, why) == ReadStatus::kOk &&
         ParsePcieSpeedMts(text, &link.max_speed_mts);
    if (!ok) {
      if (why->empty()) *why = "missing or unparsable link width or speed";
      return ReadStatus::kFailed;
    }
    reading.pcie = link;
    return ReadStatus::kOk;
  });
}

}  // namespace

void ReadRdmaPort(const SysfsTree& sysfs, std::string_view device, std::uint32_t port,
                  NicReading& reading, ReadGate& gate) {
  const std::string dir =
      "class/infiniband/" + std::string(device) + "/ports/" + std::to_string(port);
  if (!DeviceThere(sysfs, gate, reading, Source::kRdma, dir, "no such device or port")) return;
  for (const RdmaSource& source : kRdmaSources) {
    for (std::string_view file : source.files) {
      if (file.empty()) break;
      std::uint64_t value = 0;
      const Outcome got = Gated(gate, reading, Source::kRdma, file, [&](std::string* why) {
        return sysfs.ReadU64(Join(dir, file), &value, why);
      });
      if (got == Outcome::kAbsent) continue;
      if (got == Outcome::kOk) reading[source.counter] = value * source.scale;
      break;  // read, failed or held back: never the counter's other file
    }
  }
  for (const auto& [file, field] : {std::pair{"state", &NicReading::port_state},
                                    std::pair{"phys_state", &NicReading::phys_state}}) {
    Gated(gate, reading, Source::kRdma, file, [&](std::string* why) {
      return sysfs.ReadLeadingU32(Join(dir, file), &(reading.*field), why);
    });
  }
}

void ReadNetdev(const SysfsTree& sysfs, std::string_view netdev, NicReading& reading,
                ReadGate& gate) {
  const std::string dir = "class/net/" + std::string(netdev);
  if (!DeviceThere(sysfs, gate, reading, Source::kNetdev, dir, "no such netdev")) return;
  std::uint64_t changes = 0;
  if (Gated(gate, reading, Source::kNetdev, "carrier_changes", [&](std::string* why) {
        return sysfs.ReadU64(Join(dir, "carrier_changes"), &changes, why);
      }) == Outcome::kOk) {
    reading[NicCounter::kCarrierChanges] = changes;
  }
  // operstate rather than carrier: reading carrier fails (EINVAL) while the
  // interface is administratively down, operstate always answers.
  std::string state;
  if (Gated(gate, reading, Source::kNetdev, "operstate", [&](std::string* why) {
        return sysfs.ReadText(Join(dir, "operstate"), &state, why);
      }) != Outcome::kOk) {
    return;
  }
  while (!state.empty() && (state.back() == '\n' || state.back() == ' ')) state.pop_back();
  if (state == "up") {
    reading.carrier = Carrier::kUp;
  } else if (state == "down" || state == "lowerlayerdown" || state == "notpresent") {
    reading.carrier = Carrier::kDown;
  }
}

void ReadPcie(const SysfsTree& sysfs, std::string_view function_dir, NicReading& reading,
              ReadGate& gate) {
  const std::string dir(function_dir);
  if (ReadPcieLink(sysfs, dir, reading, gate) == Outcome::kAbsent) return;  // not PCIe
  for (const auto& [counter, file] : kAerFiles) {
    std::uint64_t total = 0;
    // Absent: a kernel without AER, or no capability.
    if (Gated(gate, reading, Source::kPcie, file, [&](std::string* why) {
          std::string text;
          const ReadStatus status = sysfs.ReadText(Join(dir, file), &text, why);
          if (status != ReadStatus::kOk || ParseAerTotal(text, &total)) return status;
          *why = "unparsable AER counts";
          return ReadStatus::kFailed;
        }) == Outcome::kOk) {
      reading[counter] = total;
    }
  }
}

void ReadRdmaPort(const SysfsTree& sysfs, std::string_view device, std::uint32_t port,
                  NicReading& reading) {
  OpenGate gate;
  ReadRdmaPort(sysfs, device, port, reading, gate);
}

void ReadNetdev(const SysfsTree& sysfs, std::string_view netdev, NicReading& reading) {
  OpenGate gate;
  ReadNetdev(sysfs, netdev, reading, gate);
}

void ReadPcie(const SysfsTree& sysfs, std::string_view function_dir, NicReading& reading) {
  OpenGate gate;
  ReadPcie(sysfs, function_dir, reading, gate);
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
