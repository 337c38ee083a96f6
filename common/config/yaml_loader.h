#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "common/config/map_reader.h"
#include "common/config/value_types.h"

namespace hostmesh::config {

// The largest config file read (an agent's with 8 NICs is about 1 KiB): a
// file past it is refused before it is parsed, whatever it holds.
inline constexpr ByteSize kMaxConfigFileBytes = MiB(4);

// The contents of `path`, refused before parsing when over `max_bytes` (checked
// on the open file, and again while reading, for files whose size the kernel
// does not know ahead). Throws ConfigError naming the file: cannot be read
// (with errno's text), is a directory, or its size and the cap.
std::string ReadConfigFile(const std::filesystem::path& path, ByteSize max_bytes);

// Parses `text` (yaml-cpp's parser, yaml_document.h) as one YAML document whose
// top level is a map and hands that map to `read`. Throws ConfigError with every issue found: YAML
// syntax (with its line), and whatever `read` reported through the reader. `source_name` names the
// text in messages ("agent.yaml").
// When `parsed` is given it receives the document, for positions that checks
// after the read need (the inventory's cross-references).
void ReadYaml(std::string_view text, std::string_view source_name, const MapReader::ReadFn& read,
              std::shared_ptr<const YamlDocument>* parsed = nullptr);

// ReadYaml over a file's contents; a file that cannot be read, or is larger
// than `max_bytes`, is a ConfigError too.
void ReadYamlFile(const std::filesystem::path& path, const MapReader::ReadFn& read,
                  ByteSize max_bytes = kMaxConfigFileBytes);

// A program's config struct from YAML text or a file, `read(reader, config)`
// filling it: every config's Parse and Load functions.
template <typename Config, typename Read>
Config ParseConfig(std::string_view text, std::string_view source_name, Read read) {
  Config config;
  ReadYaml(text, source_name, [&](MapReader& r) { read(r, config); });
  return config;
}

template <typename Config, typename Read>
Config LoadConfig(const std::filesystem::path& path, Read read) {
  Config config;
  ReadYamlFile(path, [&](MapReader& r) { read(r, config); });
  return config;
}

}  // namespace hostmesh::config
