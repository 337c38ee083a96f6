// A minimal streaming JSON writer: the API only ever writes JSON, so a full
// DOM library would be a dependency for nothing. Commas are placed by the
// writer; keys and values are escaped. Not a validator: callers nest properly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hostmesh::analyzer::api {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // Inside an object: the next value's key.
  JsonWriter& Key(std::string_view key);

  JsonWriter& String(std::string_view value);
  JsonWriter& Int(std::int64_t value);
  JsonWriter& Uint(std::uint64_t value);
  // Whole numbers below 1e15 as integers, others in the shortest round-trip
  // form; NaN and infinities become null (JSON has neither).
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();

  std::string out_;
  // Per open container: whether it already holds an element.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

}  // namespace hostmesh::analyzer::api
