#pragma once

#include <termios.h>

#include <optional>

#include "gpusched/v1/types.pb.h"

namespace gpusched::cli {

// This process's terminal in raw mode for as long as the object lives: the
// keys (Ctrl-C among them) go to the remote pseudo-terminal as bytes, which
// interprets them there. Nothing when `fd` is not a terminal.
class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();  // restores the terminal as it was
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  int fd_;
  std::optional<termios> saved_;
};

// The window size of the terminal on `fd`; rows and cols 0 when unknown.
v1::TerminalSize TerminalSizeOf(int fd);

}  // namespace gpusched::cli
