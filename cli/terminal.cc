#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

namespace gpusched::cli {

RawTerminal::RawTerminal(int fd) : fd_(fd) {
  termios now{};
  if (!isatty(fd) || tcgetattr(fd, &now) != 0) return;
  saved_ = now;
  cfmakeraw(&now);
  tcsetattr(fd, TCSANOW, &now);
}

RawTerminal::~RawTerminal() {
  if (saved_) tcsetattr(fd_, TCSANOW, &*saved_);
}

v1::TerminalSize TerminalSizeOf(int fd) {
  v1::TerminalSize size;
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0) {
    size.set_rows(ws.ws_row);
    size.set_cols(ws.ws_col);
  }
  return size;
}

}  // namespace gpusched::cli
