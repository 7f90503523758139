#!/usr/bin/env python3
"""Runs placid at each documented limit (docs/limits.md) and prints the time and peak memory.

    bench/limits.py [--placid PATH] [--only NAME,...] [--list]

Each case writes its input at the limit into a temporary directory (a copy of the cluster
example, a generated file, a git repository) and runs the release binary once
(`cargo build --release -p placid-cli` first, or pass --placid). It prints one row per case:
the wall time, the peak RSS (GNU time) and the exit code, which docs/limits.md's
"Measured at the limits" table records. Inputs are built to be the worst of their kind that
the limit lets through: an error on every line, the deepest nesting on every line, a stream
that expands to just under its cap.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "policy-examples", "cluster")
OPENB = os.path.join(ROOT, "..", "shared", "traces", "openb")
MIB = 1 << 20


def project(work, name):
    """A copy of the cluster example without its broken overlays."""
    path = os.path.join(work, name)
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns("broken"))
    return path


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
    with open(os.path.join(EXAMPLE, "inventory", "nvl-a.kdl")) as source:
        text = source.read()
    node = text[text.index('node "rv-a-01"') : text.index('node "rv-a-02"')]
    fill(
        os.path.join(path, "inventory", "zz.kdl"),
        lambda i: node.replace("rv-a-01", f"big-{i:06d}").replace("nvl-a", f"nvl-big{i // 8:05d}").replace('rack="r1" chassis="c1"', f'rack="big-r{i // 8}" chassis="big-c{i // 8}"'),
        64 * MIB,
    )
    return ["check", path]


def diff_many_files(work):
    """`placid diff` of a commit adding 20,000 one-line policy files."""
    path = project(work, "many")
    git = ["git", "-C", path, "-c", "user.email=bench@placid", "-c", "user.name=bench", "-c", "gc.auto=0"]
    subprocess.run(["git", "init", "-q", path], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    for index in range(20_000):
        with open(os.path.join(path, "policy", f"note-{index:05d}.kdl"), "w") as out:
            out.write(f"// note {index}\n")
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "many"], check=True)
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
}


def run(placid, args):
    """Wall time, peak RSS and exit code of one run. GNU time measures the RSS: the peak that
    wait4 reports for a child forked from this process counts this process's own memory."""
    start = time.monotonic()
    child = subprocess.run(["/usr/bin/time", "-f", "%M", placid] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.monotonic() - start
    rss_kib = int(child.stderr.strip().splitlines()[-1])
    return seconds, rss_kib, child.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--placid", default=os.path.join(ROOT, "target", "release", "placid"))
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--list", action="store_true")
    options = parser.parse_args()
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
            seconds, rss_kib, code = run(options.placid, args)
        print(f"{name:<20} {seconds:>7.2f} s {rss_kib / 1024:>7.0f} MB {code:>4}", flush=True)


if __name__ == "__main__":
    main()
