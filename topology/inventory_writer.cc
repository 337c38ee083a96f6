#include "topology/inventory_writer.h"

#include <cctype>

#include "topology/inventory_schema.h"

namespace hostmesh::topology {

namespace {

bool PlainChar(char c, bool first) {
  if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/') return true;
  return !first && (c == ':' || c == '+' || c == '-');
}

// Whether YAML would read `t` as a number (the emitter's _NUMBERISH).
bool NumberLike(std::string_view t) {
  const auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
  const std::string l = lower(t);
  if (l.starts_with("0x") || l.starts_with("0o") || l.starts_with("0b")) return true;
  if (l == ".inf" || l == ".nan") return true;
  const auto digits = [&](size_t& i, bool underscore) {
    const size_t start = i;
    while (i < l.size() &&
           (std::isdigit(static_cast<unsigned char>(l[i])) || (underscore && l[i] == '_')))
      ++i;
    return i - start;
  };
  size_t i = 0;
  if (!l.empty() && l[0] == '.') {
    ++i;
    return digits(i, true) > 0 && i == l.size();
  }
  if (l.empty() || !std::isdigit(static_cast<unsigned char>(l[0]))) return false;
  digits(i, true);
  while (i < l.size() && l[i] == ':') {  // sexagesimal 1:30
    size_t j = i + 1;
    const size_t n = digits(j, false);
    if (n == 0 || n > 2 || (n == 2 && l[i + 1] > '5')) break;
    i = j;
  }
  if (i < l.size() && l[i] == '.') {
    ++i;
    digits(i, true);
  }
  if (i < l.size() && l[i] == 'e') {
    size_t j = i + 1;
    if (j < l.size() && (l[j] == '+' || l[j] == '-')) ++j;
    if (digits(j, false) > 0) i = j;
  }
  return i == l.size();
}

bool Keyword(std::string_view t) {
  std::string l(t);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view k : {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"}) {
    if (l == k) return true;
  }
  return false;
}

class Writer {
 public:
  explicit Writer(std::string* out) : out_(*out) {}

  void Key(int indent, std::string_view key, bool item = false) {
    if (item) {
      out_.append(static_cast<size_t>(indent - 2), ' ');
      out_ += "- ";
    } else {
      out_.append(static_cast<size_t>(indent), ' ');
    }
    out_ += key;
    out_ += ':';
  }
  void Open(int indent, std::string_view key, bool item = false) {
    Key(indent, key, item);
    out_ += '\n';
  }
  void Str(int indent, std::string_view key, std::string_view value, bool item = false) {
    Key(indent, key, item);
    out_ += ' ';
    Scalar(value);
    out_ += '\n';
  }
  void Int(int indent, std::string_view key, int value) {
    Key(indent, key);
    out_ += ' ';
    out_ += std::to_string(value);
    out_ += '\n';
  }
  void Ip(int indent, std::string_view key, Ipv4 ip) { Str(indent, key, ip.ToString()); }
  void EmptyList(int indent, std::string_view key) {
    Key(indent, key);
    out_ += " []\n";
  }

 private:
  void Scalar(std::string_view text) {
    bool plain = !text.empty();
    for (size_t i = 0; i < text.size() && plain; ++i) plain = PlainChar(text[i], i == 0);
    if (plain && !NumberLike(text) && !Keyword(text)) {
      out_ += text;
      return;
    }
    out_ += '"';
    for (char c : text) {
      if (c == '"' || c == '\\') out_ += '\\';
      out_ += c;
    }
    out_ += '"';
  }

  std::string& out_;
};

template <typename E, size_t N>
std::string_view NameOf(const std::array<config::EnumName<E>, N>& names, E value) {
  for (const auto& n : names) {
    if (n.value == value) return n.name;
  }
  return "?";
}

void WriteEnd(Writer& w, const InventoryLinkEnd& end) {
  w.Str(6, "device", end.device);
  w.Str(6, "interface", end.interface);
  w.Ip(6, "ip", end.ip);
}

}  // namespace

std::string WriteInventoryYaml(const Inventory& inv, std::span<const std::string> header) {
  std::string out;
  out.reserve(200 + inv.hosts.size() * 1500 + inv.links.size() * 400);
  for (const std::string& line : header) out += "# " + line + "\n";
  Writer w(&out);
  w.Int(0, "version", inv.version);
  if (inv.management) {
    w.Open(0, "management");
    w.Str(2, "network", inv.management->network);
    w.Ip(2, "analyzer", inv.management->analyzer);
  }
  if (inv.hosts.empty())
    w.EmptyList(0, "hosts");
  else
    w.Open(0, "hosts");
  for (const InventoryHost& h : inv.hosts) {
    w.Str(4, "name", h.name, true);
    w.Int(4, "pod", h.pod);
    if (h.mgmt_ip) w.Ip(4, "mgmt_ip", *h.mgmt_ip);
    if (h.nics.empty())
      w.EmptyList(4, "nics");
    else
      w.Open(4, "nics");
    for (const InventoryNic& n : h.nics) {
      w.Str(8, "name", n.name, true);
      w.Int(8, "rail", n.rail);
      w.Ip(8, "ip", n.ip);
      w.Str(8, "netdev", n.netdev);
      w.Str(8, "switch", n.switch_name);
      w.Str(8, "switch_interface", n.switch_interface);
      w.Ip(8, "switch_ip", n.switch_ip);
    }
  }
  if (inv.switches.empty())
    w.EmptyList(0, "switches");
  else
    w.Open(0, "switches");
  for (const InventorySwitch& s : inv.switches) {
    w.Str(4, "name", s.name, true);
    w.Str(4, "tier", NameOf(schema::kTierNames, s.tier));
    if (s.pod) w.Int(4, "pod", *s.pod);
    if (s.rail) w.Int(4, "rail", *s.rail);
    if (s.interfaces.empty())
      w.EmptyList(4, "interfaces");
    else
      w.Open(4, "interfaces");
    for (const InventoryInterface& i : s.interfaces) {
      w.Str(8, "name", i.name, true);
      w.Ip(8, "ip", i.ip);
      w.Str(8, "peer", i.peer);
      w.Str(8, "peer_interface", i.peer_interface);
      w.Ip(8, "peer_ip", i.peer_ip);
    }
  }
  if (inv.links.empty())
    w.EmptyList(0, "links");
  else
    w.Open(0, "links");
  for (const InventoryLink& l : inv.links) {
    w.Str(4, "name", l.name, true);
    w.Str(4, "kind", NameOf(schema::kLinkKindNames, l.kind));
    if (!l.subnet.empty()) w.Str(4, "subnet", l.subnet);
    w.Open(4, "a");
    WriteEnd(w, l.a);
    w.Open(4, "b");
    WriteEnd(w, l.b);
  }
  return out;
}

}  // namespace hostmesh::topology
