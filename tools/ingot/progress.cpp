// The progress display of long runs.
#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace ingot::tools {

std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

std::string progress_line(std::size_t done, std::size_t total, const std::string& label, double elapsed_s,
                          std::size_t width) {
  constexpr std::size_t kBar = 20;
  const std::size_t d = std::min(done, total);
  const std::size_t filled = total ? d * kBar / total : kBar;
  std::string line = "[" + std::string(filled, '#') + std::string(kBar - filled, '-') + "] ";
  line += std::to_string(d) + "/" + std::to_string(total) + " ";
  line += std::to_string(total ? d * 100 / total : 100) + "% eta ";
  line +=
      d == 0 ? std::string("--") : duration_text(elapsed_s / static_cast<double>(d) * static_cast<double>(total - d));
  line += "  " + label;
  if (line.size() > width) line.resize(width);
  return line;
}

namespace {

std::size_t terminal_width(std::FILE* out) {
  winsize ws{};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const long v = std::strtol(c, nullptr, 10);
    if (v > 0) return static_cast<std::size_t>(v);
  }
  return 80;
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::FILE* out, Plain plain)
    : out_(out), plain_(plain), terminal_(::isatty(::fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressDisplay::operator()(std::size_t done, std::size_t total, const std::string& label) {
  if (!terminal_) {
    const std::string s = plain_(done, total, label);
    if (!s.empty()) std::fprintf(out_, "%s\n", s.c_str());
    return;
  }
  if (done >= total) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
    return;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // One column short of the width: a line that fills the terminal wraps on some terminals before the \r.
  const std::size_t width = std::max<std::size_t>(terminal_width(out_), 2) - 1;
  std::fprintf(out_, "\r\033[K%s", progress_line(done, total, label, elapsed, width).c_str());
  std::fflush(out_);
}

}  // namespace ingot::tools
