// tools/ingot/progress.hpp — the progress display of long runs (ingot test, ingot bench): on a terminal one line
// redrawn in place with a bar, the count, the current item and an estimate of the time left; elsewhere (a pipe, a
// log file) plain lines that a log keeps readable.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace ingot::tools {

// "42s", "3m05s", "1h02m".
[[nodiscard]] std::string duration_text(double seconds);

// The terminal line for `done` of `total` items finished after `elapsed_s` seconds, `label` the item now running:
// "[#####-----] 12/40 30% eta 1m05s  label", at most `width` columns (the label is cut first). The estimate is the
// mean time per finished item times the items left; "eta --" before the first is finished.
[[nodiscard]] std::string progress_line(std::size_t done, std::size_t total, const std::string& label, double elapsed_s,
                                        std::size_t width);

// The on_progress callback of the harness and the bench. On a terminal (`out` is one) it redraws progress_line at the
// terminal's width and clears it when done == total; otherwise it prints `plain(done, total, label)` lines, each
// call deciding whether to print (an empty string prints nothing).
class ProgressDisplay {
 public:
  using Plain = std::string (*)(std::size_t done, std::size_t total, const std::string& label);
  ProgressDisplay(std::FILE* out, Plain plain);
  void operator()(std::size_t done, std::size_t total, const std::string& label);

 private:
  std::FILE* out_;
  Plain plain_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ingot::tools
