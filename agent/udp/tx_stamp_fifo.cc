#include "agent/udp/tx_stamp_fifo.h"

namespace hostmesh::agent::udp {
namespace {
constexpr std::size_t kInitialRing = 4;
}  // namespace

std::uint32_t TxStampFifo::Push(const PendingSend& send) {
  if (size_ == ring_.size()) {
    // Full (or never used): double, the entries front first.
    std::vector<Entry> grown(ring_.empty() ? kInitialRing : 2 * ring_.size());
    for (std::size_t i = 0; i < size_; ++i) grown[i] = At(i);
    ring_ = std::move(grown);
    head_ = 0;
  }
  At(size_++) = Entry{send, false};
  ++pending_;
  return next_id_++;
}

std::optional<PendingSend> TxStampFifo::Take(std::uint32_t opt_id) {
  // Unsigned difference: correct across the 2^32 wrap.
  const std::uint32_t index = opt_id - front_id();
  if (index >= size_ || At(index).taken) return std::nullopt;
  Entry& entry = At(index);
  entry.taken = true;
  --pending_;
  const PendingSend send = entry.send;
  PopTaken();
  return send;
}

std::size_t TxStampFifo::Expire(MonoTime cutoff) {
  std::size_t expired = 0;
  // Sends are pushed in time order, so the old ones are at the front.
  while (size_ > 0 && At(0).send.sent_at < cutoff) {
    if (!At(0).taken) {
      ++expired;
      --pending_;
    }
    PopFront();
  }
  PopTaken();
  return expired;
}

void TxStampFifo::PopFront() {
  head_ = (head_ + 1) & (ring_.size() - 1);
  --size_;
}

void TxStampFifo::PopTaken() {
  while (size_ > 0 && At(0).taken) PopFront();
}

}  // namespace hostmesh::agent::udp
