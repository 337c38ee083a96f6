#pragma once

// config::MapReader's interface over a BlockYaml tree, for the inventory schema
// (inventory_schema.h). It does not explain problems: on the first thing it does
// not like (missing or unknown key, bad value) it marks the read failed, and the
// loader re-reads the text with MapReader, which says what is wrong and where.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/config/map_reader.h"
#include "common/config/value_parsers.h"
#include "topology/block_yaml.h"
#include "topology/ipv4.h"

namespace hostmesh::topology {

class BlockYamlReader {
 public:
  // `failed` is shared by the readers of one document.
  BlockYamlReader(const BlockYaml& doc, std::uint32_t map, bool* failed)
      : doc_(doc), map_(map), failed_(failed) {
    if (doc.node(map).kind != BlockYaml::Kind::kMap) Fail();
    size_t count = 0;
    for (std::uint32_t c = doc.node(map).first; c != BlockYaml::kNil; c = doc.node(c).next) {
      ++count;
    }
    if (count > 64) Fail();  // one bit per key in `used_`
  }

  BlockYamlReader(const BlockYamlReader&) = delete;
  BlockYamlReader& operator=(const BlockYamlReader&) = delete;

  template <typename T>
  bool Required(std::string_view key, T* out) {
    const std::uint32_t node = Find(key);
    if (node == BlockYaml::kNil) return Fail();
    return Decode(doc_.node(node), out) || Fail();
  }
  template <typename T>
  bool Optional(std::string_view key, T* out) {
    const std::uint32_t node = Find(key);
    if (node == BlockYaml::kNil) return false;
    return Decode(doc_.node(node), out) || Fail();
  }
  template <typename E>
  bool Required(std::string_view key, E* out, std::span<const config::EnumName<E>> names) {
    const std::uint32_t node = Find(key);
    if (node == BlockYaml::kNil || doc_.node(node).kind != BlockYaml::Kind::kScalar) return Fail();
    for (const config::EnumName<E>& n : names) {
      if (n.name == doc_.node(node).text) {
        *out = n.value;
        return true;
      }
    }
    return Fail();
  }

  bool Has(std::string_view key) { return Find(key) != BlockYaml::kNil; }

  template <typename F>
  bool Map(std::string_view key, F&& read) {
    return ReadMap(key, read, false);
  }
  template <typename F>
  bool RequiredMap(std::string_view key, F&& read) {
    return ReadMap(key, read, true);
  }
  template <typename F>
  bool List(std::string_view key, F&& read_item) {
    return ReadList(key, read_item, false);
  }
  template <typename F>
  bool RequiredList(std::string_view key, F&& read_item) {
    return ReadList(key, read_item, true);
  }

  void Fail(std::string_view /*key*/, const std::string& /*message*/) { Fail(); }

  // Unknown keys fail the read, as they would be errors for MapReader.
  void Finish() {
    size_t index = 0;
    for (std::uint32_t c = doc_.node(map_).first; c != BlockYaml::kNil; c = doc_.node(c).next) {
      if ((used_ & (std::uint64_t{1} << index++)) == 0) Fail();
    }
  }

 private:
  bool Fail() {
    *failed_ = true;
    return false;
  }

  std::uint32_t Find(std::string_view key) {
    if (*failed_) return BlockYaml::kNil;
    size_t index = 0;
    for (std::uint32_t c = doc_.node(map_).first; c != BlockYaml::kNil;
         c = doc_.node(c).next, ++index) {
      if (doc_.node(c).key == key) {
        used_ |= std::uint64_t{1} << index;
        return c;
      }
    }
    return BlockYaml::kNil;
  }

  static bool Decode(const BlockYaml::Node& n, std::string* out) {
    if (n.kind != BlockYaml::Kind::kScalar || n.text.empty()) return false;
    out->assign(n.text);
    return true;
  }
  static bool Decode(const BlockYaml::Node& n, int* out) {
    if (n.kind != BlockYaml::Kind::kScalar || n.quoted) return false;
    const std::optional<std::int64_t> v = config::ParseInt64(n.text);
    if (!v || *v < INT32_MIN || *v > INT32_MAX) return false;
    *out = static_cast<int>(*v);
    return true;
  }
  static bool Decode(const BlockYaml::Node& n, config::IpAddress* out) {
    if (n.kind != BlockYaml::Kind::kScalar) return false;
    const std::optional<Ipv4> ip = ParseIpv4(n.text);
    if (!ip) return false;  // IPv6 included: MapReader words that one
    *out = config::IpAddress{};
    for (int i = 0; i < 4; ++i)
      out->bytes[i] = static_cast<std::uint8_t>(ip->value >> (24 - 8 * i));
    return true;
  }

  template <typename F>
  bool ReadMap(std::string_view key, F& read, bool required) {
    const std::uint32_t node = Find(key);
    if (node == BlockYaml::kNil) return required ? Fail() : true;
    if (doc_.node(node).kind != BlockYaml::Kind::kMap) return Fail();
    BlockYamlReader child(doc_, node, failed_);
    read(child);
    child.Finish();
    return !*failed_;
  }

  template <typename F>
  bool ReadList(std::string_view key, F& read_item, bool required) {
    const std::uint32_t node = Find(key);
    if (node == BlockYaml::kNil) return required ? Fail() : true;
    if (doc_.node(node).kind == BlockYaml::Kind::kNull) return true;
    if (doc_.node(node).kind != BlockYaml::Kind::kSequence) return Fail();
    for (std::uint32_t c = doc_.node(node).first; c != BlockYaml::kNil && !*failed_;
         c = doc_.node(c).next) {
      if (doc_.node(c).kind != BlockYaml::Kind::kMap) return Fail();
      BlockYamlReader child(doc_, c, failed_);
      read_item(child);
      child.Finish();
    }
    return !*failed_;
  }

  const BlockYaml& doc_;
  std::uint32_t map_;
  bool* failed_;
  std::uint64_t used_ = 0;
};

}  // namespace hostmesh::topology
