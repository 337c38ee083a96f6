#!/usr/bin/env python3
"""Convert a hostmesh-sim export to netarch/FaultLocalization's input files.

    python3 bench/netarch/to_netarch.py EXPORT_DIR OUT_DIR [--window-s S] [--cut-short drop|spread]

EXPORT_DIR is what `hostmesh-sim run SCENARIO --export DIR` wrote (sim/README.md,
"Export"). OUT_DIR gets, in the formats netarch's C++ reader parses
(localization/c++/utils/utils.cpp: GetLinkMappings, GetDataFromLogFileParallel):

- topology.txt: `A B` per switch-to-switch link, `NIC->SWITCH` per NIC link.
  Switches are 0.., NICs 10000.. (netarch's OFFSET_HOST: a node below it is a switch).
- wNNNN.trace: one per window: `Failing_link` lines (the window's loss truth),
  `FP` lines (every shortest switch path between the rail switches of its flows),
  then per flow `FID src dst srcrack dstrack 0 0.0`, `FPT switches...`,
  `SS t sent lost 0` (one snapshot, the window's totals, at the window's middle).
- mapping.json: each netarch node and directed pair (a switch's own `S S` too)
  back to hostmesh's names and the component the scorecard names.
- windows.json: per window its file, counts written and left out (by reason),
  and its truth and don't-care components (sim/README.md, "The scorecard").

Needs PyYAML (Debian: python3-yaml). Bad input exits 2 naming the file and line or field.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field

import yaml

OFFSET_HOST = 10000  # netarch utils.h: hosts are numbered from here, switches below
# netarch defs.h MAX_PATH_LENGTH is 10 link ids; Flock adds a device link per
# switch (2n - 1 ids for n switches), so 5 switches at most.
MAX_SWITCHES = 5
PATH_KINDS = ("traced", "continued", "cut_short", "untraced")
DROP_REASONS = ("untraced", "unnamed_hop", "ambiguous", "too_long")


class ConvertError(Exception):
    """Bad input: the message names the file and line or field."""


# ---------------------------------------------------------------- topology


@dataclass
class Link:
    name: str
    a: int  # netarch node of the inventory's `a` end (the lower one)
    b: int
    component: str  # what the scorecard names: "loss link X" or "loss rnic h/nicN"


@dataclass
class Topology:
    switches: dict[str, int] = field(default_factory=dict)  # name -> node
    nics: dict[str, int] = field(default_factory=dict)  # "h000/nic0" -> node
    links: dict[str, Link] = field(default_factory=dict)
    nic_link: dict[int, Link] = field(default_factory=dict)  # NIC node -> its link
    names: dict[int, str] = field(default_factory=dict)  # node -> name
    adjacent: dict[int, set[int]] = field(default_factory=dict)  # switch graph


def require(obj: object, key: str, kind: type, where: str) -> object:
    """obj[key] of the given type, or an error naming where it is."""
    if not isinstance(obj, dict) or key not in obj:
        raise ConvertError(f"{where}: missing '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):  # JSON true is no number
        name = "number" if isinstance(kind, tuple) else kind.__name__
        raise ConvertError(f"{where}: {key}: expected {name}, got {value!r}")
    return value


def load_yaml(path: str) -> object:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when built
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.load(f, Loader=loader)
    except OSError as e:
        raise ConvertError(f"{path}: {e.strerror}") from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise ConvertError(f"{path}{line}: not YAML: {getattr(e, 'problem', e)}") from e


def new_node(ids: dict[str, int], name: str, node: int, where: str, topo: Topology) -> None:
    if name in ids:
        raise ConvertError(f"{where}: name: '{name}' again")
    ids[name] = node
    topo.names[node] = name


def number_nodes(doc: object, where: str, topo: Topology) -> None:
    """Switches 0.. and NICs OFFSET_HOST.., in inventory order (stable ids)."""
    for i, sw in enumerate(require(doc, "switches", list, where)):
        w = f"{where}: switches[{i}]"
        new_node(topo.switches, require(sw, "name", str, w), len(topo.switches), w, topo)
    if len(topo.switches) > OFFSET_HOST:
        raise ConvertError(f"{where}: {len(topo.switches)} switches; netarch takes "
                           f"{OFFSET_HOST} at most")
    for i, host in enumerate(require(doc, "hosts", list, where)):
        hname = require(host, "name", str, f"{where}: hosts[{i}]")
        for j, nic in enumerate(require(host, "nics", list, f"{where}: hosts[{i}]")):
            w = f"{where}: hosts[{i}].nics[{j}]"
            name = f"{hname}/{require(nic, 'name', str, w)}"
            new_node(topo.nics, name, OFFSET_HOST + len(topo.nics), w, topo)


def link_end(end: object, where: str, topo: Topology) -> tuple[int, bool]:
    """The netarch node of a link end and whether it is a NIC."""
    device = require(end, "device", str, where)
    if device in topo.switches:
        return topo.switches[device], False
    nic = f"{device}/{require(end, 'interface', str, where)}"
    if nic not in topo.nics:
        raise ConvertError(f"{where}.device: unknown switch or NIC '{nic}'")
    return topo.nics[nic], True


def add_link(link: object, where: str, topo: Topology, pairs: set) -> None:
    name = require(link, "name", str, where)
    a, a_nic = link_end(require(link, "a", dict, where), f"{where}.a", topo)
    b, b_nic = link_end(require(link, "b", dict, where), f"{where}.b", topo)
    if a_nic and b_nic or a == b:
        raise ConvertError(f"{where}: link '{name}' joins two NICs or a device to itself")
    if name in topo.links:
        raise ConvertError(f"{where}: name: '{name}' again")
    # netarch names a link by its two ends: a second link between them is lost.
    if (min(a, b), max(a, b)) in pairs:
        raise ConvertError(f"{where}: '{name}' is a second link between "
                           f"{topo.names[a]} and {topo.names[b]}; netarch cannot tell them apart")
    pairs.add((min(a, b), max(a, b)))
    nic = a if a_nic else b if b_nic else None
    component = f"loss rnic {topo.names[nic]}" if nic is not None else f"loss link {name}"
    topo.links[name] = Link(name, a, b, component)
    if nic is not None:
        topo.nic_link[nic] = topo.links[name]
    else:
        topo.adjacent.setdefault(a, set()).add(b)
        topo.adjacent.setdefault(b, set()).add(a)


def load_topology(path: str) -> Topology:
    doc, topo, pairs = load_yaml(path), Topology(), set()
    where = path
    number_nodes(doc, where, topo)
    for i, link in enumerate(require(doc, "links", list, where)):
        add_link(link, f"{where}: links[{i}]", topo, pairs)
    return topo


# ---------------------------------------------------------------- faults and truth


@dataclass
class Fault:
    start_ns: int
    end_ns: int
    culprits: list[str]
    dont_care: list[str]  # while active: a faulty switch's links (scorecard.cc TruthOf)


def check_component(text: str, where: str, topo: Topology) -> None:
    """A culprit as sim/components.h DescribeKey spells it, naming a known part."""
    words = text.split(" ")
    known = {"link": topo.links, "rnic": topo.nics, "switch": topo.switches}
    if len(words) == 2 and words[0] == "host":
        return
    if len(words) != 3 or words[0] not in ("loss", "latency") or words[1] not in known:
        raise ConvertError(f"{where}: '{text}' is not 'loss|latency link|rnic|switch NAME'")
    if words[2] not in known[words[1]]:
        raise ConvertError(f"{where}: unknown {words[1]} '{words[2]}'")


def switch_dont_care(culprit: str, topo: Topology) -> list[str]:
    """A faulty switch's links (and its NICs' RNICs) are don't care."""
    if not culprit.startswith("loss switch "):
        return []
    node = topo.switches[culprit.split(" ")[2]]
    return [l.component for l in topo.links.values() if node in (l.a, l.b)]


def load_faults(path: str, topo: Topology) -> list[Fault]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise ConvertError(f"{path}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise ConvertError(f"{path}:{e.lineno}: not JSON: {e.msg}") from e
    if not isinstance(doc, list):
        raise ConvertError(f"{path}: expected a list of faults")
    faults = []
    for i, fault in enumerate(doc):
        where = f"{path}: [{i}]"
        culprits = require(fault, "culprits", list, where)
        for j, c in enumerate(culprits):
            if not isinstance(c, str):
                raise ConvertError(f"{where}.culprits[{j}]: expected a string, got {c!r}")
            check_component(c, f"{where}.culprits[{j}]", topo)
        start, end = (seconds_field(fault, k, where) for k in ("start_s", "end_s"))
        dont_care = [d for c in culprits for d in switch_dont_care(c, topo)]
        faults.append(Fault(ns(start), ns(end), culprits, dont_care))
    return faults


def seconds_field(obj: dict, key: str, where: str) -> float:
    value = require(obj, key, (int, float), where)
    if value < 0:
        raise ConvertError(f"{where}: {key}: negative time {value}")
    return float(value)


def ns(seconds: float) -> int:
    """Integer nanoseconds, so "active for half the window" compares exactly."""
    return round(seconds * 1e9)


def window_truth(faults: list[Fault], start_ns: int, length_ns: int) -> tuple[set, set]:
    """The scorecard's rule: a fault active for half the window at least is
    truth; for less, its components are don't care (sim/scorecard.cc)."""
    truth, dont_care = set(), set()
    for f in faults:
        if not f.culprits:
            continue
        overlap = min(f.end_ns, start_ns + length_ns) - max(f.start_ns, start_ns)
        if overlap <= 0:
            continue
        (truth if 2 * overlap >= length_ns else dont_care).update(f.culprits)
        dont_care.update(f.dont_care)
    return truth, dont_care - truth


# ---------------------------------------------------------------- flows


@dataclass
class Flow:
    src: int
    dst: int
    switches: list[list[int]]  # the candidate switch paths (one when known)
    sent: int
    lost: int
    port: int
    kind: str


def count_field(obj: dict, key: str, where: str) -> int:
    value = require(obj, key, int, where)
    if value < 0:
        raise ConvertError(f"{where}: {key}: negative count {value}")
    return value


def nic_field(obj: dict, key: str, where: str, topo: Topology) -> int:
    name = require(obj, key, str, where)
    if name not in topo.nics:
        raise ConvertError(f"{where}: {key}: unknown NIC '{name}' (not in topology.yaml)")
    if topo.nics[name] not in topo.nic_link:
        raise ConvertError(f"{where}: {key}: NIC '{name}' has no link in topology.yaml")
    return topo.nics[name]


def hop_options(rec: dict, where: str, topo: Topology) -> list[list[Link]]:
    """Per path position, the links it may be: its own, else its candidates."""
    path = require(rec, "path", list, where)
    cands: dict[int, list[str]] = {}
    for i, c in enumerate(rec.get("candidates") or []):
        pos = require(c, "position", int, f"{where}: candidates[{i}]")
        if not 0 <= pos < len(path):
            raise ConvertError(f"{where}: candidates[{i}].position: {pos} outside the path")
        cands[pos] = require(c, "links", list, f"{where}: candidates[{i}]")
    options = []
    for i, name in enumerate(path):
        # A candidate the analyzer could not name either (null) cannot be written.
        names = [name] if name is not None else [n for n in cands.get(i, []) if n is not None]
        for n in names:
            if n not in topo.links:
                raise ConvertError(f"{where}: path[{i}]: unknown link {n!r}")
        options.append([topo.links[n] for n in names])
    return options


def switch_paths(src: int, dst: int, options: list[list[Link]]) -> list[list[int]]:
    """The switches of every walk from the src NIC to the dst NIC that the
    positions' options allow: the candidates' consistent combinations, grown
    hop by hop so inconsistent ones are cut early (switches between the ends)."""
    walks: list[tuple[int, list[int]]] = [(src, [])]
    for i, links in enumerate(options):
        last, grown = i == len(options) - 1, []
        for at, switches in walks:
            for link in links:
                if at not in (link.a, link.b):
                    continue
                to = link.b if at == link.a else link.a
                if last and to == dst:
                    grown.append((to, switches))
                elif not last and to < OFFSET_HOST:
                    grown.append((to, switches + [to]))
        walks = grown
    return [switches for _, switches in walks]


def parse_flow(rec: dict, where: str, topo: Topology) -> Flow:
    src, dst = nic_field(rec, "src", where, topo), nic_field(rec, "dst", where, topo)
    sent, lost = count_field(rec, "sent", where), count_field(rec, "lost", where)
    if lost > sent:
        raise ConvertError(f"{where}: lost: {lost} exceeds sent {sent}")
    kind = require(rec, "path_kind", str, where)
    if kind not in PATH_KINDS:
        raise ConvertError(f"{where}: path_kind: '{kind}' is not one of {', '.join(PATH_KINDS)}")
    options = hop_options(rec, where, topo)
    if (kind == "untraced") != (not options):
        raise ConvertError(f"{where}: path: {len(options)} links with path_kind '{kind}'")
    paths = []  # untraced, or a null hop without candidates
    if options and all(options):
        paths = switch_paths(src, dst, options)
        if not paths:
            raise ConvertError(f"{where}: path: no walk from {topo.names[src]} to "
                               f"{topo.names[dst]} fits it")
    return Flow(src, dst, paths, sent, lost, count_field(rec, "src_port", where), kind)


def drop_reason(flow: Flow, cut_short: str) -> str | None:
    """Why netarch cannot take the flow (one path per flow), if it cannot."""
    if flow.kind == "untraced":
        return "untraced"
    if not flow.switches:
        return "unnamed_hop"  # a null hop without candidates
    if any(len(p) > MAX_SWITCHES for p in flow.switches):
        return "too_long"
    if len(flow.switches) > 1 and cut_short == "drop":
        return "ambiguous"
    return None


def spread(flow: Flow) -> list[tuple[list[int], int, int]]:
    """--cut-short spread: sent and lost shared out over the candidate paths,
    remainders from a port-chosen path on (no path always favoured)."""
    k, first = len(flow.switches), flow.port % len(flow.switches)
    shares = []
    for i in range(k):
        extra = (i - first) % k
        sent = flow.sent // k + (extra < flow.sent % k)
        lost = flow.lost // k + (extra < flow.lost % k)
        if sent:
            shares.append((flow.switches[i], sent, lost))
    return shares


# ---------------------------------------------------------------- windows


@dataclass
class Window:
    start_ns: int
    flows: list[tuple[int, int, list[int], int, int]] = field(default_factory=list)
    dropped: dict[str, dict[str, int]] = field(
        default_factory=lambda: {r: {"flows": 0, "sent": 0, "lost": 0} for r in DROP_REASONS})

    def add(self, flow: Flow, cut_short: str) -> None:
        reason = drop_reason(flow, cut_short)
        if reason:
            d = self.dropped[reason]
            d["flows"], d["sent"], d["lost"] = (d["flows"] + 1, d["sent"] + flow.sent,
                                                d["lost"] + flow.lost)
        elif len(flow.switches) == 1:
            self.flows.append((flow.src, flow.dst, flow.switches[0], flow.sent, flow.lost))
        else:
            self.flows.extend((flow.src, flow.dst, p, s, l) for p, s, l in spread(flow))


START_RE = re.compile(r'"window_start_s"\s*:\s*([-+0-9.eE]+)')


def window_length_ns(path: str, given_s: float | None) -> int:
    """--window-s, else the least gap between the windows' starts (the export
    does not carry the scenario's window)."""
    if given_s is not None:
        if given_s <= 0:
            raise ConvertError(f"--window-s: {given_s} is not positive")
        return ns(given_s)
    starts = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if m := START_RE.search(line):
                starts.add(ns(float(m.group(1))))
    gaps = [b - a for a, b in zip(sorted(starts), sorted(starts)[1:])]
    if not gaps:
        raise ConvertError(f"{path}: fewer than two windows: give --window-s")
    return min(gaps)


def read_windows(path: str, topo: Topology, cut_short: str):
    """Yields each window once all its flows are read (the export writes them
    in order: a window is flushed when judged)."""
    window, done = None, set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            where = f"{path}:{lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ConvertError(f"{where}: not JSON: {e.msg}") from e
            if not isinstance(rec, dict):
                raise ConvertError(f"{where}: expected a JSON object")
            start = ns(seconds_field(rec, "window_start_s", where))
            if window is None or start != window.start_ns:
                if start in done:
                    raise ConvertError(f"{where}: window_start_s: window {start / 1e9} "
                                       "again after another one (not in window order)")
                if window is not None:
                    yield window
                window = Window(start)
                done.add(start)
            window.add(parse_flow(rec, where, topo), cut_short)
    if window is not None:
        yield window


# ---------------------------------------------------------------- writing


class PathSets:
    """All shortest switch paths between two switches (netarch's FP lines:
    the paths a flow between their racks may take), memoized."""

    def __init__(self, topo: Topology):
        self.adjacent = topo.adjacent
        self.memo: dict[tuple[int, int], list[tuple[int, ...]]] = {}

    def distances(self, dst: int) -> dict[int, int]:
        """Hops from every switch to dst (breadth first)."""
        dist, frontier = {dst: 0}, [dst]
        while frontier:
            grown = []
            for at in frontier:
                for n in self.adjacent.get(at, ()):
                    if n not in dist:
                        dist[n] = dist[at] + 1
                        grown.append(n)
            frontier = grown
        return dist

    def paths(self, src: int, dst: int) -> list[tuple[int, ...]]:
        if (src, dst) not in self.memo:
            dist = self.distances(dst)
            self.memo[(src, dst)] = self.extend((src,), dst, dist) if src in dist else []
        return self.memo[(src, dst)]

    def extend(self, prefix: tuple[int, ...], dst: int, dist: dict[int, int]) -> list:
        at = prefix[-1]
        if at == dst:
            return [prefix]
        return [p for n in sorted(self.adjacent.get(at, ())) if dist.get(n) == dist[at] - 1
                for p in self.extend(prefix + (n,), dst, dist)]


def write_topology(path: str, topo: Topology) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for link in topo.links.values():
            if link.a >= OFFSET_HOST or link.b >= OFFSET_HOST:
                nic, sw = (link.a, link.b) if link.a >= OFFSET_HOST else (link.b, link.a)
                f.write(f"{nic}->{sw}\n")
            else:
                f.write(f"{link.a} {link.b}\n")


def failing_links(truth: set, topo: Topology) -> list[tuple[int, int]]:
    """The loss truth as netarch's directed Failing_link pairs (both ways: the
    culprits carry no direction; a switch is its own pair)."""
    by_component = {l.component: l for l in topo.links.values()}
    pairs = []
    for c in sorted(truth):
        if c.startswith("loss switch "):
            node = topo.switches[c.split(" ")[2]]
            pairs.append((node, node))
        elif c in by_component:
            link = by_component[c]
            pairs += [(link.a, link.b), (link.b, link.a)]
    return pairs


def fp_lines(window: Window, path_sets: PathSets, topo: Topology) -> list[str]:
    """FP lines for every rack pair the window's flows join, their own paths
    included (netarch asserts a flow's path is among its pair's FP paths)."""
    by_pair: dict[tuple[int, int], set[tuple[int, ...]]] = {}
    for _, _, switches, _, _ in window.flows:
        if len(switches) > 1:
            pair = by_pair.setdefault((switches[0], switches[-1]), set())
            pair.add(tuple(switches))
            pair.update(path_sets.paths(switches[0], switches[-1]))
    lines = ["FP " + " ".join(map(str, p)) for k in sorted(by_pair) for p in sorted(by_pair[k])]
    if not lines and topo.adjacent:
        # netarch adds the one-switch (device) paths only after reading FP lines.
        a = min(topo.adjacent)
        lines.append(f"FP {a} {min(topo.adjacent[a])}")
    return lines


def write_trace(path: str, window: Window, truth: set, length_ns: int,
                path_sets: PathSets, topo: Topology) -> None:
    mid_ms = length_ns / 2e6
    with open(path, "w", encoding="utf-8") as f:
        for a, b in failing_links(truth, topo):
            f.write(f"Failing_link {a} {b} 1\n")
        for line in fp_lines(window, path_sets, topo):
            f.write(line + "\n")
        for src, dst, switches, sent, lost in window.flows:
            f.write(f"FID {src} {dst} {switches[0]} {switches[-1]} 0 0.0\n"
                    f"FPT {' '.join(map(str, switches))}\n"
                    f"SS {mid_ms:.15g} {sent} {lost} 0\n")


def pair_entry(a: int, b: int, link: Link, topo: Topology) -> dict:
    return {"link": link.name, "direction": "up" if a == link.a else "down",
            "from": topo.names[a], "to": topo.names[b], "component": link.component}


def write_mapping(path: str, topo: Topology) -> None:
    """netarch's verdicts are node pairs "(a, b)": each pair back to hostmesh."""
    pairs = {f"{s} {s}": {"switch": name, "component": f"loss switch {name}"}
             for name, s in topo.switches.items()}
    for link in topo.links.values():
        pairs[f"{link.a} {link.b}"] = pair_entry(link.a, link.b, link, topo)
        pairs[f"{link.b} {link.a}"] = pair_entry(link.b, link.a, link, topo)
    doc = {"offset_host": OFFSET_HOST, "nodes": {str(n): v for n, v in topo.names.items()},
           "pairs": pairs}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)


def window_summary(index: int, window: Window, length_ns: int, truth: set,
                   dont_care: set) -> dict:
    return {"index": index, "file": f"w{index:04d}.trace", "start_s": window.start_ns / 1e9,
            "end_s": (window.start_ns + length_ns) / 1e9, "flows": len(window.flows),
            "sent": sum(f[3] for f in window.flows), "lost": sum(f[4] for f in window.flows),
            "dropped": window.dropped, "truth": sorted(truth), "dont_care": sorted(dont_care)}


def convert(export_dir: str, out_dir: str, window_s: float | None, cut_short: str) -> dict:
    topo = load_topology(os.path.join(export_dir, "topology.yaml"))
    faults = load_faults(os.path.join(export_dir, "faults.json"), topo)
    flows_path = os.path.join(export_dir, "flows.jsonl")
    if not os.path.isfile(flows_path):
        raise ConvertError(f"{flows_path}: no such file")
    length_ns = window_length_ns(flows_path, window_s)
    os.makedirs(out_dir, exist_ok=True)
    write_topology(os.path.join(out_dir, "topology.txt"), topo)
    write_mapping(os.path.join(out_dir, "mapping.json"), topo)
    path_sets, summaries = PathSets(topo), []
    for index, window in enumerate(read_windows(flows_path, topo, cut_short)):
        truth, dont_care = window_truth(faults, window.start_ns, length_ns)
        write_trace(os.path.join(out_dir, f"w{index:04d}.trace"), window, truth, length_ns,
                    path_sets, topo)
        summaries.append(window_summary(index, window, length_ns, truth, dont_care))
    doc = {"window_s": length_ns / 1e9, "cut_short": cut_short, "windows": summaries}
    with open(os.path.join(out_dir, "windows.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return doc


def report(doc: dict) -> str:
    """One line: what went in and what netarch cannot take."""
    ws = doc["windows"]
    kept = sum(w["flows"] for w in ws)
    lost = sum(w["lost"] for w in ws)
    parts = [f"{len(ws)} windows of {doc['window_s']:g} s, {kept} flows ({lost} lost probes)"]
    for r in DROP_REASONS:
        flows = sum(w["dropped"][r]["flows"] for w in ws)
        if flows:
            parts.append(f"left out {r}: {flows} flows "
                         f"({sum(w['dropped'][r]['lost'] for w in ws)} lost)")
    return "; ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("export_dir", help="hostmesh-sim run --export DIR")
    ap.add_argument("out_dir", help="where netarch's input files go")
    ap.add_argument("--window-s", type=float, help="window length (default: from the export)")
    ap.add_argument("--cut-short", choices=("drop", "spread"), default="drop",
                    help="flows with several candidate paths: left out (default), or their "
                         "probes shared out over the candidates")
    args = ap.parse_args()
    try:
        doc = convert(args.export_dir, args.out_dir, args.window_s, args.cut_short)
    except ConvertError as e:
        print(f"to_netarch: {e}", file=sys.stderr)
        return 2
    print(report(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
