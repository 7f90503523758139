#!/usr/bin/env python3
"""Runs placid at each documented limit (docs/limits.md) and prints the time and peak memory.

    bench/limits.py [--placid PATH] [--probe PATH] [--only NAME,...] [--list]

Each case writes its input at the limit into a temporary directory (a copy of the cluster
example, a generated file, a git repository) and runs the release binary once
(`cargo build --release -p placid-cli -p placid-probe` first, or pass --placid and --probe).
It prints one row per case: the wall time, the peak RSS (GNU time) and the exit code, which
docs/limits.md's "Measured at the limits" table records. A server case (the extender) starts
the server, sends its requests once it listens, and reports the slowest request's time (or
the time to listen or to refuse its start, when it sends none) and the server's peak RSS. Inputs are built to be the worst of their kind that
the limit lets through: an error on every line, the deepest nesting on every line, a stream
that expands to just under its cap.
"""

import argparse
import functools
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "policy-examples", "cluster")
OPENB = os.path.join(ROOT, "..", "shared", "traces", "openb")
MIB = 1 << 20
PLACID = os.path.join(ROOT, "target", "release", "placid")  # --placid, for cases that build first


def project(work, name):
    """A copy of the cluster example without its broken overlays."""
    path = os.path.join(work, name)
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns("broken"))
    return path


GIT_IDENTITY = ["-c", "user.email=bench@placid", "-c", "user.name=bench", "-c", "gc.auto=0"]


def commit_all(path, message):
    """Commits everything in `path` as `message`, making it a repository first if need be."""
    if not os.path.isdir(os.path.join(path, ".git")):
        subprocess.run(["git", "init", "-q", path], check=True)
    subprocess.run(["git", "-C", path] + GIT_IDENTITY + ["add", "-A"], check=True)
    subprocess.run(["git", "-C", path] + GIT_IDENTITY + ["commit", "-qm", message], check=True)


@functools.cache
def first_example_node():
    """The example's first node as its inventory writes it."""
    with open(os.path.join(EXAMPLE, "inventory", "nvl-a.kdl")) as source:
        text = source.read()
    return text[text.index('node "rv-a-01"') : text.index('node "rv-a-02"')]


def example_node(index):
    """The example's first node, renamed `big-NNNNNN`, eight to an NVLink domain, rack and
    chassis."""
    return (
        first_example_node().replace("rv-a-01", f"big-{index:06d}")
        .replace("nvl-a", f"nvl-big{index // 8:05d}")
        .replace('rack="r1" chassis="c1"', f'rack="big-r{index // 8}" chassis="big-c{index // 8}"')
    )


def stamp(seconds, zone=""):
    """A time `seconds` into the benchmarks' epoch, as sacct (no zone) or Kubernetes (`Z`)
    writes it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_700_000_000 + seconds)) + zone


def fill(path, line_of, limit):
    """Writes lines `line_of(0)`, `line_of(1)`, ... while the file stays within `limit` bytes."""
    size, lines, index = 0, [], 0
    while True:
        line = line_of(index)
        if size + len(line) > limit:
            break
        lines.append(line)
        size += len(line)
        index += 1
    with open(path, "w") as out:
        out.write("".join(lines))
    return index


def policy_errors(work, fmt):
    """A 1 MiB policy file with errors on every line (four diagnostics each)."""
    path = project(work, "errors")
    fill(os.path.join(path, "policy", "zz.kdl"), lambda i: f'team "t{i:06d}" {{ bogus 1; share "x" }}\n', MIB)
    return ["check", "--format", fmt, path]


def nesting(work):
    """Blocks nested 63 deep (the limit is 64) on every line of a 1 MiB file."""
    path = project(work, "nesting")
    line = "x " + "{ x " * 63 + "}" * 63 + "\n"
    fill(os.path.join(path, "policy", "zz.kdl"), lambda _: line, MIB)
    return ["check", path]


def comments(work):
    """Block comments of 254 pieces (the limit is 256) filling a 1 MiB file."""
    path = project(work, "comments")
    line = "/*" + "/* a */" * 84 + "*/\n"
    fill(os.path.join(path, "policy", "zz.kdl"), lambda _: line, MIB)
    return ["check", path]


def inventory(work):
    """A 64 MiB KDL inventory: the example's first node, renamed, eight to a domain."""
    path = project(work, "inventory")
    fill(os.path.join(path, "inventory", "zz.kdl"), example_node, 64 * MIB)
    return ["check", path]


def diff_many_files(work):
    """`placid diff` of a commit adding 20,000 one-line policy files."""
    path = project(work, "many")
    commit_all(path, "base")
    for index in range(20_000):
        with open(os.path.join(path, "policy", f"note-{index:05d}.kdl"), "w") as out:
            out.write(f"// note {index}\n")
    commit_all(path, "many")
    return ["diff", "--base", "HEAD~1", "--head", "HEAD", path]


def telemetry(work):
    """1,000,000 rows of a recorded series, replayed with the example's day trace."""
    path = project(work, "telemetry")
    with open(os.path.join(path, "policy", "telemetry.kdl"), "w") as out:
        out.write('telemetry half-life="1m" max-age="1h" {\n    throttle domain-nvlink-above=0.85 for="5m" comm="high"\n}\n')
    series = os.path.join(work, "series.csv")
    with open(series, "w") as out:
        out.write("at,scope,name,utilization\n")
        out.writelines(f"{i},domain,nvl-a,{(i % 100) / 100:.2f}\n" for i in range(1_000_000))
    return ["simulate", "--trace", os.path.join(path, "traces", "day.csv"), "--telemetry", series, path]


def openb(work):
    """A 16 MiB openb pod list (the shared list's rows, renamed) on 150 nodes, inside the visit bound."""
    with open(os.path.join(OPENB, "openb_pod_list_default.csv")) as source:
        rows = source.read().splitlines()
    with open(os.path.join(OPENB, "openb_node_list_gpu_node.csv")) as source:
        nodes = source.read().splitlines()
    node_list = os.path.join(work, "nodes.csv")
    with open(node_list, "w") as out:
        out.write("\n".join(nodes[:151]) + "\n")
    pods = os.path.join(work, "pods.csv")
    body = rows[1:]
    fill(pods, lambda i: rows[0] + "\n" if i == 0 else f"big-{i:07d},{body[i % len(body)].split(',', 1)[1]}\n", 16 * MIB)
    return ["simulate", "--import", "openb", "--nodes", node_list, "--pods", pods]


def month_policy(share):
    """The engine's synthetic policy (`POLICY` in compiler/engine/src/synthetic.rs, its one
    spelling), as a project over `nodes.kdl`, team t2's share set to `share`."""
    with open(os.path.join(ROOT, "compiler", "engine", "src", "synthetic.rs")) as source:
        policy = re.search(r'pub const POLICY: &str = r#"(.*?)"#;', source.read(), re.S).group(1)
    t2 = 'team "t2" {\n    share 2\n'
    assert t2 in policy, "synthetic.rs's team t2 has changed"
    return 'project "month" currency="usd"\ninventory "nodes.kdl"\n' + policy.replace(t2, t2.replace("share 2", f"share {share}"))

MONTH_TIERS = {"t0": ["prod", "train", "batch"], "t1": ["train", "batch"], "t2": ["train", "batch"], "t3": ["batch"]}


def month_project(work, jobs=1_000_000, nodes=10_000):
    """The engine's synthetic cluster (compiler/engine/src/synthetic.rs) as a project: `nodes`
    nodes of eight H200s, eight nodes to an NVLink domain, and 30 days of `jobs` jobs of the
    synthetic workload (mostly node-local jobs of 1 to 8 GPUs, a tenth domain gangs of 16 to
    64, 10 minutes to 4 hours, every tier a team may use), about a quarter of the GPUs busy:
    the what-if of issue 35. Committed twice, the head giving team t2 a larger share."""
    path = os.path.join(work, "month")
    os.makedirs(os.path.join(path, "traces"))
    with open(os.path.join(path, "nodes.kdl"), "w") as out:
        for index in range(nodes):
            domain = index // 8
            out.write(
                f'node "n{index:06d}" arch="x86_64" rack="r{domain // 2}" chassis="c{domain}" nvlink-domain="d{domain}" capacity="on-demand" {{\n'
                "    cpu harts=128\n    cost gpu-hour=(usd)2\n"
                + "".join(f'    gpu {gpu} model="H200"\n' for gpu in range(8))
                + "}\n"
            )
    rng = random.Random(42)
    gap = 30 * 86_400 / jobs
    with open(os.path.join(path, "traces", "month.csv"), "w") as out:
        out.write("job,submit,team,tier,class,pool,gpus,run\n")
        time_now = 0.0
        for index in range(jobs):
            time_now += rng.uniform(0, 2 * gap)
            team = rng.choice(list(MONTH_TIERS))
            tier = rng.choice(MONTH_TIERS[team])
            gang = rng.randrange(10) == 0
            gpus = 16 << rng.randrange(3) if gang else 1 << rng.randrange(4)
            out.write(f"j{index:07d},{int(time_now)},{team},{tier},{'gang' if gang else 'single'},all,{gpus},{600 + rng.randrange(4 * 3600)}\n")
    for share in ("2", "3"):
        with open(os.path.join(path, "placid.kdl"), "w") as out:
            out.write(month_policy(share))
        commit_all(path, f"t2 share {share}")
    return path


def month_simulate(work):
    """One side of the month's what-if: `simulate --trace` of 1,000,000 jobs on 10,000 nodes."""
    path = month_project(work)
    return ["simulate", "--trace", os.path.join(path, "traces", "month.csv"), path]


def month_diff(work):
    """The month's what-if: `diff --simulate`, both sides (two threads)."""
    path = month_project(work)
    return ["diff", "--base", "HEAD~1", "--head", "HEAD", "--simulate", os.path.join(path, "traces", "month.csv"), path]


def saturated(work):
    """1,000,000 jobs a second apart, 1 to 4 GPUs for an hour each, from every team at each
    tier it may use but the reserved one, on the cluster example: the engine's saturated
    benchmark (compiler/engine/benches/engine.rs) at the job limit. Its queue never drains, so
    the replay runs into its bound on verdicts (MAX_VERDICTS) and reports the jobs left."""
    path = project(work, "saturated")
    tiers = {"vision": ["P1", "P2"], "speech": ["P1", "P2"], "research": ["P2"]}
    rng = random.Random(7)
    # In the project, where the what-if reads a committed trace.
    trace = os.path.join(path, "traces", "saturated.csv")
    with open(trace, "w") as out:
        out.write("job,submit,team,tier,gpus,run\n")
        for index in range(1_000_000):
            team = rng.choice(list(tiers))
            out.write(f"s{index:07d},{index},{team},{rng.choice(tiers[team])},{1 + rng.randrange(4)},3600\n")
    return ["simulate", "--trace", trace, path]


def saturated_diff(work):
    """The saturated trace as a what-if (`diff --simulate`, both sides at once, each stopping
    at its bound), the head giving team research a larger share."""
    args = saturated(work)
    path, trace = args[-1], args[2]
    commit_all(path, "base")
    teams = os.path.join(path, "policy", "teams.kdl")
    with open(teams) as source:
        text = source.read()
    share = re.search(r'team "research" \{[^}]*?share ([0-9]+)', text, re.S)
    assert share, "teams.kdl's team research has no share"
    with open(teams, "w") as out:
        out.write(text[: share.start(1)] + str(int(share.group(1)) + 1) + text[share.end(1) :])
    commit_all(path, "research share")
    return ["diff", "--base", "HEAD~1", "--head", "HEAD", "--simulate", trace, path]


def template(work, body):
    """A Slurm template override that spends all its fuel or all its output."""
    path = project(work, "template-" + str(len(body)))
    config = os.path.join(path, "placid.kdl")
    with open(config) as source:
        text = source.read()
    with open(config, "w") as out:
        out.write(text.replace('target "slurm" version="22.05" cluster="ml"', 'target "slurm" version="22.05" cluster="ml" templates="templates"'))
    os.mkdir(os.path.join(path, "templates"))
    with open(os.path.join(path, "templates", "stage.sbatch.j2"), "w") as out:
        out.write(body)
    return ["check", path]


class Zeros:
    """`size` zero bytes, read in pieces, for tarfile."""

    def __init__(self, size):
        self.left = size

    def read(self, want=-1):
        count = self.left if want < 0 else min(want, self.left)
        self.left -= count
        return bytes(count)


def audit(work):
    """A gzipped tar whose one member expands to 1 MiB under the 16 GiB stream cap."""
    archive = os.path.join(work, "bomb.tar.gz")
    member = tarfile.TarInfo("zero")
    member.size = 16 * 1024 * MIB - 2 * MIB
    with tarfile.open(archive, "w:gz", compresslevel=1) as out:
        out.addfile(member, Zeros(member.size))
    return ["audit-binaries", archive]


class Probe(list):
    """Arguments for placid-probe rather than placid."""


class Served:
    """A server to start (placid's arguments, `--listen` added) and the requests to send it
    once it listens: (path, body) pairs."""

    def __init__(self, args, requests):
        self.args, self.requests = args, requests


def leb128(number):
    """`number` as an unsigned LEB128, as Wasm encodes counts and sizes."""
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        out.append(byte | (0x80 if number else 0))
        if not number:
            return bytes(out)


def read_leb128(data, at):
    number = shift = 0
    while True:
        byte = data[at]
        at += 1
        number |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return number, at


def wasm_at_limit(module, limit=MIB, body_limit=256 << 10):
    """`module` (a placid plugin) grown to just under `limit` bytes by functions of just under
    `body_limit` each, which Cranelift finds costly: 200 i64 locals, and a conditional add of
    two random locals into a third, over and over (every branch joins with a new value)."""
    sections, at = [], 8
    while at < len(module):
        size, start = read_leb128(module, at + 1)
        sections.append((module[at], module[start : start + size]))
        at = start + size
    rng = random.Random(1)

    def piece():
        a, b, c, d = (leb128(rng.randrange(200)) for _ in range(4))
        # local.get d; i64.eqz; if; local.get a; local.get b; i64.add; local.set c; end
        return b"\x20" + d + b"\x50\x04\x40\x20" + a + b"\x20" + b + b"\x7c\x21" + c + b"\x0b"

    def body(size):
        code = bytearray(b"\x01" + leb128(200) + b"\x7e")
        while True:
            step = piece()
            if len(code) + len(step) + 1 > size:
                return leb128(len(code) + 1) + bytes(code) + b"\x0b"
            code += step

    bodies = []
    while (room := limit - len(module) - sum(map(len, bodies)) - 64) > 1024:
        bodies.append(body(min(body_limit - 8, room)))
    types = next(payload for kind, payload in sections if kind == 1)
    new_type, _ = read_leb128(types, 0)

    def append(payload, entries, count):
        old, start = read_leb128(payload, 0)
        return leb128(old + count) + payload[start:] + entries

    grown = bytearray(module[:8])
    for kind, payload in sections:
        if kind == 1:  # types: add () -> ()
            payload = append(payload, b"\x60\x00\x00", 1)
        elif kind == 3:  # functions: each of the new type
            payload = append(payload, leb128(new_type) * len(bodies), len(bodies))
        elif kind == 10:  # code
            payload = append(payload, b"".join(bodies), len(bodies))
        grown += bytes([kind]) + leb128(len(payload)) + payload
    assert len(grown) <= limit, len(grown)
    return bytes(grown)


def wasm_module(work):
    """The extender started with a 1 MiB plugin whose functions are each just under the
    256 KiB body limit and costly to compile: it is refused at the 2 s compile deadline."""
    path = project(work, "wasm")
    built = os.path.join(work, "built")
    subprocess.run([PLACID, "build", "-o", built, path], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(built, "wasm", "cost-aware.wasm"), "rb") as source:
        grown = wasm_at_limit(source.read())
    plugin = os.path.join(work, "big.wasm")
    with open(plugin, "wb") as out:
        out.write(grown)
    return Served(["extender", "--plugin", plugin], [])


def big_inventory(path, count):
    """`count` copies of the example's first node, renamed ([`example_node`]), in
    `inventory/zz.kdl`; returns their names."""
    with open(os.path.join(path, "inventory", "zz.kdl"), "w") as out:
        out.write("".join(example_node(index) for index in range(count)))
    return [f"big-{index:06d}" for index in range(count)]


def extender_pod():
    return {
        "metadata": {"name": "p", "labels": {"placid.dev/comm": "high", "placid.dev/class": "model-parallel"}},
        "spec": {"containers": [{"image": "trainer", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
    }


def extender_names(work):
    """The extender serving the example's score over 15,000 nodes, asked to filter and rank all
    15,000 by name (`--max-nodes`, `nodeCacheCapable`)."""
    path = project(work, "names")
    names = big_inventory(path, 15_000)
    body = json.dumps({"Pod": extender_pod(), "Nodes": None, "NodeNames": names})
    return Served(["extender", path], [("/filter", body), ("/prioritize", body)])


def node_object(name):
    """A `v1.Node` as kube-scheduler sends it without `nodeCacheCapable`: about 3 KiB with the
    labels node feature discovery publishes."""
    labels = {f"feature.node.kubernetes.io/cpu-cpuid.feature-{i:02d}": "true" for i in range(48)}
    labels.update({"kubernetes.io/hostname": name, "placid.dev/rack": "r1"})
    resources = {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": resources, "capacity": resources}}


def extender_objects(work):
    """The same extender, asked to filter and rank Node objects filling the 8 MiB body limit."""
    path = project(work, "objects")
    names = big_inventory(path, 15_000)
    document = lambda count: json.dumps({"Pod": extender_pod(), "Nodes": {"items": [node_object(name) for name in names[:count]]}, "NodeNames": None})
    count = 8 * MIB // (len(json.dumps(node_object(names[-1]))) + 2)
    while len(body := document(count)) > 8 * MIB:
        count -= 1
    assert len(body) <= 8 * MIB
    return Served(["extender", path], [("/filter", body), ("/prioritize", body)])


def probe_root(work):
    """`placid-probe --root` of a captured tree whose every file it reads is at the 4 MiB
    limit: /proc/cpuinfo of riscv64 harts whose `isa` lines list thousands of extensions, the
    host's and eight NUMA nodes' meminfo, their cpulists, 64 GPUs' PCI files and NVIDIA driver
    information, and the online CPUs `0-65535`."""
    root = os.path.join(work, "root")
    limit = 4 * MIB

    def write(relative, text):
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        assert len(text) <= limit, (relative, len(text))
        with open(path, "w") as out:
            out.write(text)

    isa = "rv64imafdcv" + "".join(f"_xbench{i}" for i in range(10_000)) + "_zba_zbb_zbs"
    harts, hart = [], 0
    while sum(map(len, harts)) + len(isa) + 200 < limit:
        harts.append(f"processor\t: {hart}\nhart\t\t: {hart}\nisa\t\t: {isa}\nmmu\t\t: sv48\nuarch\t\t: bench,big\n\n")
        hart += 1
    write("proc/cpuinfo", "".join(harts))
    padding = lambda head: head + "".join(f"Bench{i}:  {i} kB\n" for i in range(limit // 24))[: limit - len(head)]
    write("proc/meminfo", padding("MemTotal:       1073741824 kB\n"))
    write("sys/devices/system/cpu/online", "0-65535\n")
    cpulist = ",".join(str(cpu) for cpu in range(0, 65536, 2))
    cpulist = (cpulist + ",") * (limit // (len(cpulist) + 1))
    for node in range(8):
        write(f"sys/devices/system/node/node{node}/cpulist", cpulist[:-1] + "\n")
        write(f"sys/devices/system/node/node{node}/meminfo", padding(f"Node {node} MemTotal:       134217728 kB\n"))
    information = "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-00000000-0000-0000-0000-000000000000\n"
    information += "".join(f"Bench {i}: \t {i}\n" for i in range(limit // 16))[: limit - len(information)]
    for gpu in range(64):
        bus = f"0000:{gpu:02x}:00.0"
        for name, text in [("vendor", "0x10de\n"), ("class", "0x030200\n"), ("device", "0x2335\n"), ("numa_node", f"{gpu % 8}\n")]:
            write(f"sys/bus/pci/devices/{bus}/{name}", text)
        write(f"sys/bus/pci/devices/{bus}/local_cpulist", cpulist[:-1] + "\n")
        write(f"proc/driver/nvidia/gpus/{bus}/information", information)
    return Probe(["--root", root, "--name", "big"])


def output_manifest(work):
    """`placid build -o` over a forged earlier build at the manifest's 64 MiB limit: the
    manifest lists 20,000 small files and a 1 GiB (sparse) one with their true hashes, and
    about 750,000 files that are not there; every file present must be hashed before the tree
    is replaced."""
    path = project(work, "manifest")
    out = os.path.join(work, "out")
    artifacts = {}
    for index in range(20_000):
        relative = f"part-{index // 1000:02d}/file-{index:05d}.yaml"
        os.makedirs(os.path.join(out, os.path.dirname(relative)), exist_ok=True)
        data = f"file {index}\n".encode()
        with open(os.path.join(out, relative), "wb") as file:
            file.write(data)
        artifacts[relative] = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "large.bin"), "wb") as file:
        file.truncate(1 << 30)
    zeros = hashlib.sha256()
    block = bytes(MIB)
    for _ in range(1024):
        zeros.update(block)
    artifacts["large.bin"] = zeros.hexdigest()
    head = {"placid-version": "0", "source-hash": "0" * 64}
    entry = len(json.dumps({"absent/file-0000000.yaml": "0" * 64}))
    for index in range((64 * MIB - len(json.dumps({**head, "artifacts": artifacts}))) // entry - 10):
        artifacts[f"absent/file-{index:07d}.yaml"] = f"{index:064x}"
    manifest = json.dumps({**head, "artifacts": artifacts})
    assert len(manifest) <= 64 * MIB, len(manifest)
    with open(os.path.join(out, "manifest.json"), "w") as file:
        file.write(manifest)
    return ["build", "-o", out, path]


def history_sacct(work):
    """A 32 MiB Slurm history (`--from sacct`): as many one-GPU jobs of ten minutes as fit,
    a minute apart, in pool x86, from every team at each tier it may use but the reserved one, every
    one replayed."""
    path = project(work, "sacct")
    tiers = {"vision": ["p1", "p2"], "speech": ["p1", "p2"], "res": ["p2"]}  # by Slurm account
    rng = random.Random(11)
    header = "JobID|JobName|Account|QOS|Partition|State|Submit|Start|End|Timelimit|ReqTRES|AllocTRES|Comment\n"

    def line(index):
        if index == 0:
            return header
        team = rng.choice(list(tiers))
        submit = index * 60
        return f"{index}|j|{team}|{rng.choice(tiers[team])}|x86|COMPLETED|{stamp(submit)}|{stamp(submit)}|{stamp(submit + 600)}|00:20:00|gres/gpu=1|gres/gpu=1|\n"

    history = os.path.join(work, "history.txt")
    fill(history, line, 32 * MIB)
    return ["simulate", "--trace", history, "--from", "sacct", path]


def kueue_workload(index):
    """One finished Workload of the cluster example's Kubernetes layout, as short as Kueue
    could list it."""
    team = ("vision", "speech-ml", "research")[index % 3]  # their namespaces
    start, end = stamp(index * 30, "Z"), stamp(600 + index * 30, "Z")
    return json.dumps(
        {
            "kind": "Workload",
            "metadata": {"name": f"w{index}", "namespace": team, "creationTimestamp": start},
            "spec": {"queueName": "p2", "podSets": [{"count": 1, "template": {"spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}}]},
            "status": {
                "conditions": [
                    {"type": "Admitted", "status": "True", "lastTransitionTime": start},
                    {"type": "Finished", "status": "True", "lastTransitionTime": end},
                ]
            },
        },
        separators=(",", ":"),
    )


def history_kueue(work):
    """A 32 MiB Kueue history (`--from kueue`): as many short finished Workloads as fit."""
    path = project(work, "kueue")
    workloads = []
    size, index = len('{"items":[]}'), 0
    while True:
        item = kueue_workload(index)
        if size + len(item) + 1 > 32 * MIB:
            break
        workloads.append(item)
        size += len(item) + 1
        index += 1
    history = os.path.join(work, "workloads.json")
    with open(history, "w") as out:
        out.write('{"items":[' + ",".join(workloads) + "]}")
    return ["simulate", "--trace", history, "--from", "kueue", path]


def history_kueue_tree(work):
    """A 32 MiB Kueue history that is the most JSON values the size allows: one Workload
    carrying an array of 16 million zeros, the costliest tree for a reader that holds it."""
    path = project(work, "kueue-tree")
    item = kueue_workload(0)
    zeros = (32 * MIB - len(item) - 64) // 2
    history = os.path.join(work, "workloads.json")
    with open(history, "w") as out:
        out.write('{"items":[' + item[:-1] + ',"x":[' + ",".join(["0"] * zeros) + "]}]}")
    return ["simulate", "--trace", history, "--from", "kueue", path]


CASES = {
    "policy-errors-json": lambda work: policy_errors(work, "json"),
    "policy-errors-text": lambda work: policy_errors(work, "text"),
    "nesting": nesting,
    "comments": comments,
    "inventory-kdl": inventory,
    "diff-many-files": diff_many_files,
    "telemetry": telemetry,
    "openb-pods": openb,
    "template-fuel": lambda work: template(work, "{% for i in range(10000) %}{% for j in range(10000) %}{{ j }}{% endfor %}{% endfor %}\n"),
    "template-output": lambda work: template(work, '{% for i in range(10000) %}{{ "x" * 100000 }}{% endfor %}\n'),
    "audit-stream": audit,
    "month-simulate": month_simulate,
    "month-diff": month_diff,
    "trace-saturated": saturated,
    "trace-saturated-diff": saturated_diff,
    "wasm-module": wasm_module,
    "extender-names": extender_names,
    "extender-objects": extender_objects,
    "probe-root": probe_root,
    "output-manifest": output_manifest,
    "history-sacct": history_sacct,
    "history-kueue": history_kueue,
    "history-kueue-tree": history_kueue_tree,
}


def run(binary, args):
    """Wall time, peak RSS and exit code of one run. GNU time measures the RSS: the peak that
    wait4 reports for a child forked from this process counts this process's own memory."""
    start = time.monotonic()
    child = subprocess.run(["/usr/bin/time", "-f", "%M", binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    rss_kib = int(child.stderr.strip().splitlines()[-1])
    return seconds, rss_kib, child.returncode


def serve(placid, served):
    """Starts the server, sends each request once it listens and returns the slowest
    request's time (the time to listen, or to refuse to start, when there are none), the
    server's peak RSS (GNU time, as `run`) and 0 when every answer was 200 (else the exit code
    or the first other status)."""
    start = time.monotonic()
    timed = subprocess.Popen(
        ["/usr/bin/time", "-f", "peak-rss %M", placid] + served.args + ["--listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The server says where it listens on stderr, after any warnings; the rest is kept (GNU
    # time's line comes last) and read as it comes, so that the log never fills the pipe.
    address, lines = None, []
    for line in timed.stderr:
        lines.append(line)
        if address := re.search(r"http://([0-9.]+):([0-9]+)", line):
            break
    ready = time.monotonic() - start
    drain = threading.Thread(target=lambda: lines.extend(timed.stderr), daemon=True)
    drain.start()
    slowest, status = ready if not served.requests else 0.0, 0
    if address:
        for path, body in served.requests:
            connection = http.client.HTTPConnection(address.group(1), int(address.group(2)), timeout=60)
            sent = time.monotonic()
            connection.request("POST", path, body=body.encode(), headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            slowest = max(slowest, time.monotonic() - sent)
            status = status or (0 if answer.status == 200 else answer.status)
            connection.close()
        # Stop the server (GNU time's child), not GNU time, which then reports its peak.
        with open(f"/proc/{timed.pid}/task/{timed.pid}/children") as children:
            for pid in children.read().split():
                os.kill(int(pid), 15)
    code = timed.wait()
    drain.join()
    rss_kib = int(next(line for line in reversed(lines) if line.startswith("peak-rss")).split()[1])
    return slowest, rss_kib, status if address else code


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--placid", default=os.path.join(ROOT, "target", "release", "placid"))
    parser.add_argument("--probe", default=os.path.join(ROOT, "target", "release", "placid-probe"))
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--list", action="store_true")
    options = parser.parse_args()
    global PLACID
    PLACID = options.placid
    if options.list:
        print("\n".join(CASES))
        return
    chosen = [name for name in options.only.split(",") if name] or list(CASES)
    unknown = [name for name in chosen if name not in CASES]
    if unknown:
        sys.exit(f"unknown cases: {', '.join(unknown)}")
    print(f"{'case':<20} {'time':>9} {'peak RSS':>10} exit")
    for name in chosen:
        with tempfile.TemporaryDirectory(prefix=f"placid-limit-{name}-") as work:
            args = CASES[name](work)
            if isinstance(args, Served):
                seconds, rss_kib, code = serve(options.placid, args)
            else:
                seconds, rss_kib, code = run(options.probe if isinstance(args, Probe) else options.placid, args)
        print(f"{name:<20} {seconds:>7.2f} s {rss_kib / 1024:>7.0f} MB {code:>4}", flush=True)


if __name__ == "__main__":
    main()
