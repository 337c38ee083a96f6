#pragma once

// A token bucket in the injected clock's time: `rate` tokens per second up to
// `burst`. It may be charged into debt (a trace that needed more probes than
// it reserved), which later requests then wait out, so the long-run rate holds.

#include "common/base/clock.h"

namespace hostmesh::tracer {

class TokenBucket {
 public:
  // Starts full.
  TokenBucket(double rate_per_second, double burst, MonoTime now);

  double Tokens(MonoTime now) const;
  // Takes `n` tokens when there are that many; false (and nothing taken) otherwise.
  bool TryTake(double n, MonoTime now);
  // Takes `n` tokens unconditionally (may go below zero); negative `n` returns
  // tokens, never above the burst.
  void Charge(double n, MonoTime now);
  // The earliest instant at which TryTake(n) succeeds (`now` if it does now).
  // `n` above the burst is treated as the burst.
  MonoTime WhenAvailable(double n, MonoTime now) const;

  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  void Refill(MonoTime now);

  double rate_;
  double burst_;
  double tokens_;
  MonoTime updated_;
};

}  // namespace hostmesh::tracer
