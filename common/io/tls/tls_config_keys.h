#pragma once

#include "common/config/toml_table_reader.h"
#include "common/io/tls/tls_files.h"

namespace gpusched::tls {

// Reads the three TLS keys of a settings file (gpuschedd.toml, agent.toml,
// cli.toml) as paths, relative ones taken from the file's directory, and
// checks the files they name and how they go together (CheckTlsFiles), each
// problem recorded at the line of the key it is about. Unset keys are empty.
// `complete` as for CheckTlsFiles: false where another file or the
// environment may supply the keys this file leaves out.
TlsFiles ReadTlsKeys(config::TomlTableReader& reader, const TlsKeyNames& names, bool complete = true);

// The check half of ReadTlsKeys, for a loader that read the keys itself
// (from a settings table): each problem of `files` at its key's line.
void RecordTlsProblems(config::TomlTableReader& reader, const TlsFiles& files, const TlsKeyNames& names,
                       bool complete = true);

}  // namespace gpusched::tls
