#pragma once

// Queueing on a congested port, as the packet model adds it: a latency fault
// and ordinary congestion are a queue, not a constant. Pure and hash-driven:
// nothing here draws from an agent's random stream, so turning congestion on
// or changing it leaves every loss and every other delay of a run as it was.
//
// A congested port's level wanders: over time its mean wait is the configured
// delay times a log-normal factor (mean 1, `sigma`) whose logarithm moves
// linearly between independent knots `knot_ns` apart. Each packet then waits
// behind the burst ahead of it: none with probability 1 - busy, else an
// exponential time, so the mean wait is the level and the tail is long (an
// M/M/1 queue's waiting time at utilisation `busy`).
//
// Ordinary congestion moves around (incast, colliding elephant flows): on any
// directed link, episodes start at random, last a log-uniform time and add a
// log-uniform level, so that `share` of the directed links are congested at
// any time. They are no fault: a monitor must not page for them.

#include <cstdint>
#include <vector>

#include "sim/fleet.h"

namespace hostmesh::sim {

struct QueueModel {
  double sigma = 0.4;                    // spread of the wandering level (log)
  std::int64_t knot_ns = 5'000'000'000;  // the level's correlation time
  double busy = 0.9;                     // share of packets that wait at all
  bool tail = true;                      // false: every packet waits the level
};

struct MovingCongestionModel {
  double share = 0.01;  // of directed links congested at a time (0: none)
  std::int64_t min_added_ns = 5'000;
  std::int64_t max_added_ns = 50'000;
  std::int64_t min_duration_ns = 500'000'000;
  std::int64_t max_duration_ns = 10'000'000'000;
};

// A uniform in [0, 1) from a 64-bit key.
double HashUniform(std::uint64_t key);
// The level's factor for queue `queue` at t (1 when sigma is 0).
double WanderFactor(const QueueModel& m, std::uint64_t queue, std::int64_t t);
// One packet's wait at mean `level_ns`, from the packet's key.
std::int64_t QueueWait(const QueueModel& m, double level_ns, std::uint64_t packet);

// The episodes of a run, drawn once from its seed.
class MovingCongestion {
 public:
  MovingCongestion(const Fleet& fleet, const MovingCongestionModel& model, std::int64_t duration_ns,
                   std::uint64_t seed);

  // The summed level of the episodes on a directed link at t (0: none), and
  // the key of the first one (to wander and draw with).
  double LevelAt(LinkId link, bool up, std::int64_t t, std::uint64_t* queue) const;
  std::size_t episodes() const { return episodes_.size(); }

 private:
  struct Episode {
    std::int64_t start_ns;
    std::int64_t end_ns;
    double added_ns;
  };
  std::vector<Episode> episodes_;       // by directed link, then start
  std::vector<std::uint32_t> offsets_;  // [directed] .. [directed + 1] in episodes_
};

}  // namespace hostmesh::sim
