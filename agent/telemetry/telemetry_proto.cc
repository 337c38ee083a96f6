#include "agent/telemetry/telemetry_proto.h"

namespace hostmesh::agent::telemetry {

v1::NicCounter ToProto(NicCounter counter) {
  switch (counter) {
    case NicCounter::kLinkDowned:
      return v1::NIC_COUNTER_LINK_DOWNED;
    case NicCounter::kSymbolError:
      return v1::NIC_COUNTER_SYMBOL_ERROR;
    case NicCounter::kPortRcvErrors:
      return v1::NIC_COUNTER_PORT_RCV_ERRORS;
    case NicCounter::kPortXmitDiscards:
      return v1::NIC_COUNTER_PORT_XMIT_DISCARDS;
    case NicCounter::kPortRcvDataBytes:
      return v1::NIC_COUNTER_PORT_RCV_DATA_BYTES;
    case NicCounter::kPortXmitDataBytes:
      return v1::NIC_COUNTER_PORT_XMIT_DATA_BYTES;
    case NicCounter::kOutOfSequence:
      return v1::NIC_COUNTER_OUT_OF_SEQUENCE;
    case NicCounter::kPacketSeqErr:
      return v1::NIC_COUNTER_PACKET_SEQ_ERR;
    case NicCounter::kLocalAckTimeoutErr:
      return v1::NIC_COUNTER_LOCAL_ACK_TIMEOUT_ERR;
    case NicCounter::kNpCnpSent:
      return v1::NIC_COUNTER_NP_CNP_SENT;
    case NicCounter::kRpCnpHandled:
      return v1::NIC_COUNTER_RP_CNP_HANDLED;
    case NicCounter::kRnrNakRetryErr:
      return v1::NIC_COUNTER_RNR_NAK_RETRY_ERR;
    case NicCounter::kPortRcvPackets:
      return v1::NIC_COUNTER_PORT_RCV_PACKETS;
    case NicCounter::kPortXmitPackets:
      return v1::NIC_COUNTER_PORT_XMIT_PACKETS;
    case NicCounter::kCarrierChanges:
      return v1::NIC_COUNTER_CARRIER_CHANGES;
    case NicCounter::kLinkDownEvents:
      return v1::NIC_COUNTER_LINK_DOWN_EVENTS;
    case NicCounter::kRxDiscardsPhy:
      return v1::NIC_COUNTER_RX_DISCARDS_PHY;
    case NicCounter::kRxOutOfBuffer:
      return v1::NIC_COUNTER_RX_OUT_OF_BUFFER;
    case NicCounter::kRxSymbolErrors:
      return v1::NIC_COUNTER_RX_SYMBOL_ERRORS;
    case NicCounter::kRxFcsErrors:
      return v1::NIC_COUNTER_RX_FCS_ERRORS;
    case NicCounter::kRxPause:
      return v1::NIC_COUNTER_RX_PAUSE;
    case NicCounter::kTxPause:
      return v1::NIC_COUNTER_TX_PAUSE;
    case NicCounter::kAerCorrectable:
      return v1::NIC_COUNTER_PCIE_AER_CORRECTABLE;
    case NicCounter::kAerNonfatal:
      return v1::NIC_COUNTER_PCIE_AER_NONFATAL;
    case NicCounter::kAerFatal:
      return v1::NIC_COUNTER_PCIE_AER_FATAL;
  }
  return v1::NIC_COUNTER_UNSPECIFIED;
}

namespace {

v1::Carrier ToProto(Carrier carrier) {
  switch (carrier) {
    case Carrier::kUp:
      return v1::CARRIER_UP;
    case Carrier::kDown:
      return v1::CARRIER_DOWN;
    case Carrier::kUnknown:
      break;
  }
  return v1::CARRIER_UNKNOWN;
}

void AddPfc(const PfcCounters& counters, v1::NicCounter kind, v1::NicTelemetry& out) {
  for (std::size_t p = 0; p < counters.size(); ++p) {
    if (!counters[p]) continue;
    v1::CounterDelta* d = out.add_deltas();
    d->set_counter(kind);
    d->set_delta(*counters[p]);
    d->set_priority(static_cast<std::uint32_t>(p));
  }
}

}  // namespace

v1::NicTelemetry ToProto(std::uint32_t nic_id, const NicDelta& delta) {
  v1::NicTelemetry out;
  out.set_nic(nic_id);
  out.set_start_ns(delta.start_ns);
  out.set_end_ns(delta.end_ns);
  for (std::size_t i = 0; i < kNicCounterCount; ++i) {
    if (!delta.counters[i]) continue;
    v1::CounterDelta* d = out.add_deltas();
    d->set_counter(ToProto(static_cast<NicCounter>(i)));
    d->set_delta(*delta.counters[i]);
  }
  AddPfc(delta.rx_pfc_pause, v1::NIC_COUNTER_RX_PAUSE, out);
  AddPfc(delta.tx_pfc_pause, v1::NIC_COUNTER_TX_PAUSE, out);
  out.set_port_state(delta.port_state);
  out.set_phys_state(delta.phys_state);
  out.set_carrier(ToProto(delta.carrier));
  if (delta.pcie) {
    v1::PcieLink* link = out.mutable_pcie();
    link->set_current_width(delta.pcie->current_width);
    link->set_max_width(delta.pcie->max_width);
    link->set_current_speed_mts(delta.pcie->current_speed_mts);
    link->set_max_speed_mts(delta.pcie->max_speed_mts);
  }
  out.set_read_failures(delta.read_failures);
  out.set_counter_resets(delta.counter_resets);
  return out;
}

}  // namespace hostmesh::agent::telemetry
