// Text that came from a file (a database's spec text or device name, a PTX line), made safe to
// print on a terminal: control characters written as escapes, so no byte of a file can move the
// cursor, set the title or write the clipboard (an OSC 52 sequence "\x1b]52;c;...\x07").
#pragma once

#include <string>
#include <string_view>

namespace tcjit::support {

// `text` with each C0 control character and DEL written as \xNN ("\x1b", "\x07", "\x0a"), each C1
// control character (U+0080 to U+009F in UTF-8) as \u00NN, and each byte that is not part of
// valid UTF-8 as \xNN. Other characters, backslashes included, are kept as they are.
std::string escape_controls(std::string_view text);

// The same, but newlines and tabs kept: for messages of several lines.
std::string escape_controls_keep_lines(std::string_view text);

} // namespace tcjit::support
