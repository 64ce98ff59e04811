// TeamWidthPolicy: whether the target's thread runs its forwards on its
// whole OpenMP team or on one thread.
//
// A team meets at a barrier after each of a forward's parallel regions, so
// where other processes hold the cores one descheduled thread stalls the
// others at every region: on a 2-core VM beside one busy process, the zoo
// target's 2-thread decode ran at 58 tokens/s against 1,245 on one thread
// (2,129 on two alone), and two seed processes started together decoded 6
// tokens/s each. So forwards are timed as a line in their rows, for the
// width they run at, and now and then the other width is tried (a probe):
// after a second forward of the whole team over kSlow times its line
// within a few (stalled: the cores taken; one such forward alone is most
// often a moment's hiccup, and a busy machine lets some forwards through
// at full speed), kFirstProbe forwards after the start (a run started on
// a busy machine has no faster forward to compare with) and every
// kProbeEvery forwards after that, each once a forward no wider than the
// line's mean rows has run (a probe on a free machine costs about a
// forward, and the next forward's rows are much the last one's: on a
// 2-core CPU a probe of one thread fell on a drafted round of 24 rows,
// 63 ms against 34 on the team). A probe under kSwitch times the line (or
// times the stalled forwards, for its rows) switches width. A probe of the
// team is two forwards, the second timed: the first wakes threads that
// slept through one-thread forwards, and on a 2-core VM took twice as long
// as the next. On one thread, probes of the whole team come
// kFirstProbe forwards apart, twice as far after each that loses (or that
// won by luck: the team stalled again within kProbeEvery forwards), at
// most kLastProbe: while the machine stays busy each costs slow forwards.
// Not thread-safe (the engine's loop).
#pragma once

#include <cstdint>

#include "spec/engine/line_fit.h"

namespace seed::spec {

class TeamWidthPolicy {
 public:
  // Whether the next forward runs on one thread.
  bool single() const { return single_ != (probe_left_ > 0); }
  // The forward single() chose verified `rows` rows in `seconds`;
  // `on_a_team`: on more than one thread (only such forwards stall).
  void add(int64_t rows, double seconds, bool on_a_team);

  static constexpr double kDecay = 0.99;         // per forward on the line
  static constexpr double kMinWeight = 4;        // forwards (decayed) before the line stands
  static constexpr double kMinRowVariance = 0.25;  // spread of rows before a slope is fitted
  static constexpr double kOutlier = 1.5;        // a forward over this times the line counts as this much
  static constexpr double kSlow = 3;             // a whole team's forward over this times the line: stalled
  static constexpr double kStallDecay = 0.9;     // per forward on a team, on the count of stalled ones
  static constexpr double kStalls = 1.5;         // that count, decayed, before one thread is tried
  static constexpr double kSwitch = 0.8;         // a probe under this times the line: switch
  static constexpr int64_t kProbeEvery = 256;
  static constexpr int64_t kFirstProbe = 16;
  static constexpr int64_t kLastProbe = 1024;

 private:
  bool single_ = false;       // the width forwards run at
  int probe_left_ = 0;        // forwards still to run on the other width
  double probe_against_ = 1;  // what the probe must beat, in times the line
  double stalls_ = 0;         // stalled forwards of the team, decayed
  double stall_ratio_ = 0;    // the least of them, in times the line
  LineFit line_;              // seconds by rows, at single_'s width
  int64_t since_probe_ = 0;
  int64_t probe_every_ = kFirstProbe;
  int64_t single_every_ = kFirstProbe;  // probe_every_ on one thread
  int64_t since_switch_ = kProbeEvery;  // forwards since the width last changed (the start: long ago)
};

}  // namespace seed::spec
