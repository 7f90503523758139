#!/usr/bin/env python3
"""Writes one benchmark shape, N teams x M NVLink domains x 4 tiers, three ways.

    shape.py TEAMS DOMAINS DIR

DIR/placid/   a placid project: M one-node NVLink domains (JSON inventory), one pool per
              domain (so M cells, M ResourceFlavors), 4 tiers, N teams allowed every tier,
              target "kubernetes": N ClusterQueues of M flavor entries each. Kueue takes
              at most 64 flavors in a ClusterQueue (placid refuses more, E056), so past
              64 domains the project has 64 domains and N*M/64 teams: the same N*M flavor
              entries, the figure the cost grows with.
DIR/peer.pkl and DIR/peer.jsonnet
              the same objects as the configuration-language peers model them: 4
              PriorityClass, 4 WorkloadPriorityClass, 1 Topology, M ResourceFlavor, N*M
              ClusterQueue and N*M LocalQueue, printed as one YAML stream (Pkl) or one JSON
              array (jsonnet). The programs are small on purpose: the loops are the peers'.
"""

import json
import os
import sys

TIERS = [("p0", 1000), ("p1", 500), ("p2", 100), ("p3", 10)]


def placid_project(teams, domains, root):
    os.makedirs(os.path.join(root, "inventory"), exist_ok=True)
    os.makedirs(os.path.join(root, "policy"), exist_ok=True)
    nodes = []
    for domain in range(domains):
        gpus = [{"index": gpu, "model": "H200", "memory": "141GiB", "numa": gpu // 2, "mig": "disabled",
                 "nvlinks": [{"peer": peer, "links": 6, "bandwidth": "300GB/s"} for peer in range(4) if peer != gpu]}
                for gpu in range(4)]
        nodes.append({"name": f"rv-{domain:04}", "arch": "riscv64", "rack": f"r{domain // 8:03}", "chassis": f"c{domain:04}",
                      "nvlink-domain": f"nvl-{domain:04}", "capacity": "on-demand", "cost-gpu-hour": "3.10",
                      "cpu": {"harts": 64, "cores": 64, "sockets": 1, "isa": "rv64imafdcv", "numa-nodes": 2},
                      "memory": "512GiB", "gpus": gpus})
    with open(os.path.join(root, "inventory", "nodes.json"), "w") as out:
        json.dump({"nodes": nodes}, out)
    lines = [f'pool "pool-{domain:04}" {{ select nvlink-domain="nvl-{domain:04}" }}' for domain in range(domains)]
    for name, priority in TIERS:
        lines.append(f'tier "{name}" {{ priority {priority}; preemption window="3m" mode="requeue" }}')
    lines.append('cost-center "cc" { budget daily=(usd)100000000 }')
    tiers = " ".join(f'"{name}"' for name, _ in TIERS)
    for team in range(teams):
        lines.append(f'team "team-{team:04}" {{ share {10 + team % 7}; cost-center "cc"; tiers {tiers}; budget daily=(usd)2000 }}')
    with open(os.path.join(root, "policy", "policy.kdl"), "w") as out:
        out.write("\n".join(lines) + "\n")
    with open(os.path.join(root, "placid.kdl"), "w") as out:
        out.write('project "bench" currency="usd"\ninventory "inventory/*.json"\ninclude "policy/*.kdl"\n'
                  'target "kubernetes" version="1.34" label-prefix="placid.dev" namespace="placid-system"\n')


PKL = """\
teams = %(teams)d
domains = %(domains)d
tiers = List(%(tiers)s)
local flavorNames = IntSeq(0, domains - 1).map((d) -> "nvl-\\(d)").toList()
local function meta(name: String) = new Dynamic { ["name"] = name; ["labels"] { ["app.kubernetes.io/managed-by"] = "pkl" } }
local priorityClasses = tiers.map((t) -> new Dynamic {
  apiVersion = "scheduling.k8s.io/v1"; kind = "PriorityClass"; metadata = meta(t.first); value = t.second; preemptionPolicy = "PreemptLowerPriority"
})
local workloadPriorityClasses = tiers.map((t) -> new Dynamic {
  apiVersion = "kueue.x-k8s.io/v1beta1"; kind = "WorkloadPriorityClass"; metadata = meta(t.first); value = t.second
})
local topology = new Dynamic {
  apiVersion = "kueue.x-k8s.io/v1alpha1"; kind = "Topology"; metadata = meta("default")
  spec { levels { new { nodeLabel = "placid.dev/rack" } new { nodeLabel = "placid.dev/nvlink-domain" } new { nodeLabel = "kubernetes.io/hostname" } } }
}
local flavors = flavorNames.map((f) -> new Dynamic {
  apiVersion = "kueue.x-k8s.io/v1beta1"; kind = "ResourceFlavor"; metadata = meta(f)
  spec { nodeLabels { ["placid.dev/nvlink-domain"] = f }; topologyName = "default" }
})
local pairs = IntSeq(0, teams - 1).toList().flatMap((t) -> flavorNames.map((f) -> Pair("team-\\(t)", f)))
local clusterQueues = pairs.map((p) -> new Dynamic {
  apiVersion = "kueue.x-k8s.io/v1beta1"; kind = "ClusterQueue"; metadata = meta("\\(p.first)-\\(p.second)")
  spec {
    cohort = "bench"
    namespaceSelector { matchLabels { ["placid.dev/team"] = p.first } }
    resourceGroups { new { coveredResources = List("cpu", "memory", "nvidia.com/gpu")
      flavors { new { name = p.second; resources {
        new { name = "cpu"; nominalQuota = 64 } new { name = "memory"; nominalQuota = "512Gi" } new { name = "nvidia.com/gpu"; nominalQuota = 4 } } } } } }
  }
})
local localQueues = pairs.map((p) -> new Dynamic {
  apiVersion = "kueue.x-k8s.io/v1beta1"; kind = "LocalQueue"; metadata = meta("\\(p.first)-\\(p.second)")
  spec { clusterQueue = "\\(p.first)-\\(p.second)" }
})
output {
  value = priorityClasses + workloadPriorityClasses + List(topology) + flavors + clusterQueues + localQueues
  renderer = new YamlRenderer { isStream = true }
}
"""

JSONNET = """\
local teams = %(teams)d;
local domains = %(domains)d;
local tiers = %(tiers_json)s;
local flavorNames = ['nvl-%%d' %% d for d in std.range(0, domains - 1)];
local meta(name) = { name: name, labels: { 'app.kubernetes.io/managed-by': 'jsonnet' } };
local pairs = [['team-%%d' %% t, f] for t in std.range(0, teams - 1) for f in flavorNames];
[{ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: meta(t[0]), value: t[1], preemptionPolicy: 'PreemptLowerPriority' } for t in tiers]
+ [{ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'WorkloadPriorityClass', metadata: meta(t[0]), value: t[1] } for t in tiers]
+ [{ apiVersion: 'kueue.x-k8s.io/v1alpha1', kind: 'Topology', metadata: meta('default'),
     spec: { levels: [{ nodeLabel: 'placid.dev/rack' }, { nodeLabel: 'placid.dev/nvlink-domain' }, { nodeLabel: 'kubernetes.io/hostname' }] } }]
+ [{ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'ResourceFlavor', metadata: meta(f),
     spec: { nodeLabels: { 'placid.dev/nvlink-domain': f }, topologyName: 'default' } } for f in flavorNames]
+ [{ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'ClusterQueue', metadata: meta(p[0] + '-' + p[1]),
     spec: { cohort: 'bench', namespaceSelector: { matchLabels: { 'placid.dev/team': p[0] } },
             resourceGroups: [{ coveredResources: ['cpu', 'memory', 'nvidia.com/gpu'],
                                flavors: [{ name: p[1], resources: [{ name: 'cpu', nominalQuota: 64 }, { name: 'memory', nominalQuota: '512Gi' },
                                                                    { name: 'nvidia.com/gpu', nominalQuota: 4 }] }] }] } } for p in pairs]
+ [{ apiVersion: 'kueue.x-k8s.io/v1beta1', kind: 'LocalQueue', metadata: meta(p[0] + '-' + p[1]),
     spec: { clusterQueue: p[0] + '-' + p[1] } } for p in pairs]
"""


MAX_FLAVORS = 64


def placid_shape(teams, domains):
    """(teams, domains) of the placid project for a peer shape: the same flavor entries."""
    if domains <= MAX_FLAVORS:
        return teams, domains
    return teams * domains // MAX_FLAVORS, MAX_FLAVORS


def main_args(teams, domains, root):
    placid_project(*placid_shape(teams, domains), os.path.join(root, "placid"))
    tiers = ", ".join(f'Pair("{name}", {priority})' for name, priority in TIERS)
    with open(os.path.join(root, "peer.pkl"), "w") as out:
        out.write(PKL % {"teams": teams, "domains": domains, "tiers": tiers})
    tiers_json = json.dumps([[name, priority] for name, priority in TIERS])
    with open(os.path.join(root, "peer.jsonnet"), "w") as out:
        out.write(JSONNET % {"teams": teams, "domains": domains, "tiers_json": tiers_json})


if __name__ == "__main__":
    main_args(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
