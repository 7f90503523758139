//! The registry of stable diagnostic codes. Each code is declared once here, with the name
//! that says what it flags, a one-line summary and the explanation that becomes its entry in
//! `docs/errors.md` (a test keeps that file in step with this table).
//!
//! Ranges: E001-E019 syntax and lowering, E020-E039 checker rules, E040-E049 Slurm target,
//! E050-E059 Kubernetes target, E060-E069 Wasm, E070-E079 inventory and drift,
//! E080-E089 migrations, E090-E099 workflow (build output, diff, verify, stdout and stderr),
//! E100-E119 engine and policy tests (rejection reasons, `placid test`, the engine's checks),
//! E120-E129 traces (`placid simulate`: placid traces and openb lists), E130-E139 run-time
//! limits, E140-E149 Kubernetes placement (cells, topology nesting, the plugin and the YAML of the tree), E150-E154 telemetry and throttling, E160-E169 tier budgets,
//! tag routing and settings without an effect, E170-E179 what a stage runs.

macro_rules! codes {
    ($( $variant:ident = $number:literal, $name:literal, $summary:literal, $explanation:literal; )*) => {
        /// A stable diagnostic code. Codes are never renumbered or reused.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $(
                #[doc = $summary]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in numeric order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The number after `E`.
            pub fn number(self) -> u16 {
                match self { $(Code::$variant => $number,)* }
            }

            /// The kebab-case name that says what the code flags.
            pub fn name(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// One line: what is wrong.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }

            /// Why it is wrong and how to fix it (Markdown).
            pub fn explanation(self) -> &'static str {
                match self { $(Code::$variant => $explanation,)* }
            }
        }
    };
}

impl Code {
    /// The code as users see it: `placid::E007`.
    pub fn id(self) -> String {
        format!("placid::E{:03}", self.number())
    }
}

codes! {
    KdlSyntax = 1, "kdl-syntax", "the file is not valid KDL 2.0",
        "The file could not be parsed as KDL 2.0. Strings need double quotes unless they are plain identifiers, booleans are `#true`/`#false`, and type annotations look like `(usd)12`.";
    UnknownNode = 2, "unknown-node", "a node name placid does not know here",
        "Each block accepts a fixed set of child nodes (see docs/language.md). A misspelt node is an error rather than being ignored, so a typo cannot silently drop a rule.";
    UnknownProperty = 3, "unknown-property", "a property placid does not know on this node",
        "Each node accepts a fixed set of properties. Unknown properties are errors, with the closest known name suggested.";
    MissingValue = 4, "missing-value", "a required argument, property or child is missing",
        "The node needs a value that was not given, such as a tier's `priority` or a stage's `pool`.";
    InvalidValue = 5, "invalid-value", "a value has the wrong type or is out of range",
        "The value is of the wrong kind (a string where a number is expected), is out of range, or is not one of the allowed keywords.";
    InvalidUnit = 6, "invalid-unit", "a quantity has a missing or unknown unit",
        "Every quantity carries its unit: durations `90s`, `3m`, `24h`; memory `141GiB`; bandwidth `900GB/s` or `400Gb/s`; percentages `90%`; money `(usd)12000`. Money is exact to the currency's minor unit.";
    DuplicateName = 7, "duplicate-name", "a name is declared twice",
        "Every pool, tier, team, class, score, plan, stage, migration, alert, test and node has one declaration. The second one is reported with a pointer to the first.";
    UnresolvedReference = 8, "unresolved-reference", "a reference names nothing that is declared",
        "A reference to a tier, pool, team, cost center, class, score, stage or metric must name a declaration; the closest declared name is suggested.";
    InvalidName = 9, "invalid-name", "a name has characters that cannot reach generated files safely",
        "Names are 1-63 characters of ASCII letters, digits, `-`, `_` and `.`, starting with a letter or digit. This keeps every name safe in slurm.conf, Lua, YAML and label values by construction: no `:`, `=`, spaces, quotes or newlines.";
    IncludeOutsideRoot = 10, "include-outside-root", "an include or inventory path leaves the project root",
        "Includes and inventory paths are relative to the project root and may not use `..`, absolute paths, or symlinks that resolve outside the root.";
    UnreadableSource = 11, "unreadable-source", "a source file could not be read",
        "A file named by the project (or matched by a glob) could not be read, or a glob matched nothing.";
    DuplicateProperty = 12, "duplicate-property", "a property or single-use child is given twice",
        "A property may appear once per node, and single-valued children (such as `priority`) once per block.";
    ExpressionSyntax = 13, "expression-syntax", "a score expression does not parse",
        "Score expressions use numbers, `node.*` and `job.*` features, `+ - * /`, comparisons, `&&`, `||`, `!`, parentheses and the functions in docs/language.md.";
    ExpressionType = 14, "expression-type", "a score expression uses an unknown feature or mixes types",
        "Features have types (number, boolean, or a categorical such as `comm`); arithmetic needs numbers, conditions need booleans, and categoricals compare only with their own values.";
    CurrencyMismatch = 15, "currency-mismatch", "money amounts in different currencies are compared",
        "placid never converts currencies. Budgets and node costs must use the project's currency.";
    MissingProject = 16, "missing-project", "the project file has no `project` node",
        "`placid.kdl` must start with `project \"name\"`.";
    NestingTooDeep = 17, "nesting-too-deep", "a file nests blocks deeper than placid reads",
        "Children blocks (`{ ... }`) may nest at most 64 levels, and one block comment (`/* ... */`) may have at most 256 parts (runs of text, `*`, `/` and nested comments). placid's files nest a few levels; the bound keeps a small file of deep braces from exhausting the parser's stack. Flatten the file, close the braces that were left open, or write long comments as `//` lines.";
    FileTooLarge = 18, "file-too-large", "a source file is larger than placid reads",
        "placid reads policy files (`placid.kdl`, included files, Slurm template overrides) of at most 1 MiB and inventory files of at most 64 MiB, and stops reading at the limit. Split a large inventory into several files (inventory patterns take globs), or check that the pattern does not match something that is not a policy (a log, an image).";
    SpecialFile = 19, "special-file", "a source path names a FIFO, socket, device or directory",
        "placid reads regular files only: a FIFO would block it, and a device such as `/dev/zero` never ends. It checks the file type before reading and opens files so that a FIFO cannot block. Replace the path with a regular file, or narrow the glob that matched it.";
    EmptyPool = 20, "empty-pool", "a pool selects no node of the inventory",
        "A pool whose selector matches no node cannot host anything. Check the selector against the inventory (`placid graph` shows domains and racks).";
    ReservationExceedsPool = 21, "reservation-exceeds-pool", "a reservation asks for more GPUs than its pool has",
        "A tier reserves GPUs in a pool; the reservation must fit in the pool's GPUs.";
    ReservationsExceedPool = 22, "reservations-exceed-pool", "the reservations in one pool exceed its GPUs together",
        "All tiers' reservations in one pool together must fit in the pool.";
    DomainTooSmall = 23, "domain-too-small", "a stage that needs NVLink locality fits in no single NVLink domain of its pool",
        "A class with `locality \"nvlink-domain\"` (or NVLink required) keeps each job inside one NVLink domain; `node`, `chassis` and `rack` keep it inside one such unit. If the stage needs more GPUs than the largest unit of its pool has, it can never run. The checker asks the engine (docs/semantics.md) whether the gang fits the empty cluster, so only GPUs a job of the stage can use count: not nodes another pool's reservation fences off (the unit figures of the message leave them out), and only nodes that pass the class's filters (architecture, bandwidth, lanes, bisection, MIG, capacity kind). Where the largest unit's GPUs alone do not explain the error, the message says that fewer can be used.";
    MissingRiscvImage = 24, "missing-riscv64-image", "a stage placed on riscv64 nodes has no riscv64 image",
        "When a class declares image platforms, every stage of that class that can land on riscv64 nodes needs a `linux/riscv64` image.";
    PreemptibleNeverTier = 25, "non-preemptible-tier-preemptible", "a tier declared `never` preempted could still be preempted",
        "Schedulers preempt by priority: a `never` tier must rank above every preemptible tier, and must not run on spot capacity that the provider can reclaim.";
    ReservationOverBudget = 26, "reservation-over-budget", "reserved capacity costs more per day than the budget",
        "Reserved GPUs are paid for around the clock: GPUs x price per GPU-hour x 24 must fit the daily budget of the tier's cost center.";
    TeamBudgetsExceedCostCenter = 27, "team-budgets-exceed-cost-center", "team budgets add up to more than their cost center's",
        "The daily budgets of the teams of a cost center must not exceed the cost center's daily budget.";
    PlanCycle = 28, "plan-cycle", "the stages of a plan depend on each other in a cycle",
        "Stages run after the stages they name in `after`; a cycle means none of them can start.";
    StageForwardReference = 29, "stage-forward-reference", "a stage runs after a stage declared later",
        "Stages are written in the order they run: `after` may only name earlier stages.";
    TierNotAllowed = 30, "tier-not-allowed", "a team uses a tier it is not allowed",
        "A team's `tiers` lists the tiers its jobs may use; plans and tests of the team must stay within them.";
    StageExceedsPool = 31, "stage-exceeds-pool", "a stage needs more GPUs at once than its pool has",
        "A stage's GPUs per trial must fit in its pool. The checker asks the engine (docs/semantics.md) whether the gang fits the empty cluster, so only GPUs a job of the stage can use count: not nodes another pool's reservation fences off (an overlapping pool does not reach them; the message's figure leaves them out), and only nodes that pass the class's filters. Where that figure alone does not explain the error, the message says that fewer can be used. A pool with no GPU of the stage's capacity kind at all is E100.";
    MigUnavailable = 32, "mig-unavailable", "a class needs a MIG profile that no GPU of the pool offers",
        "A class with `mig` needs MIG-enabled GPUs with that profile in every pool its stages use.";
    NvlinkUnavailable = 33, "nvlink-unavailable", "a class that requires NVLink runs in a pool without NVLink",
        "`nvlink \"required\"` needs nodes with NVLink links (and enough bandwidth) in the pool.";
    ScoreFeatureUnavailable = 34, "score-feature-unavailable", "a score uses a node feature the inventory does not provide",
        "A score expression reads a node feature that no node of the inventory has; every node would score as missing.";
    TestExpectationFails = 35, "test-expectation-invalid", "a policy test expects something that cannot be checked",
        "`test` blocks describe jobs and what the team expects of them; every expectation must be one a run can report. A `reason=` names a reason the engine gives (a diagnostic name such as `tier-not-allowed`, or a hold reason); a name of the policy that does not exist (a team, tier, pool or job of the test) is E008, as everywhere. An admission expectation (`expect \"refused-by-admission\"`, `expect \"admitted\"`) needs `target \"kubernetes\"`, whose admission policies judge it: without one it cannot be checked, and is reported rather than passed.";
    NvlinkIslands = 36, "nvlink-islands", "a node in an NVLink domain has GPUs that NVLink does not connect",
        "A node that names an NVLink domain should have all its GPUs reachable from each other over NVLink. When its NVLink links split the GPUs into separate islands (or it has no links at all), jobs placed there for NVLink locality run over PCIe instead. This is a warning: check the inventory (a failed link, a missing `nvlink` line) or drop the node from the domain.";
    ValueOverflow = 37, "value-overflow", "numbers add up or multiply past what placid can count",
        "placid adds and multiplies the numbers of a policy in fixed-size integers: reservations per cost center (GPUs x price x 24 hours), team budgets per cost center, host memory over the inventory, NVLink bandwidth over a GPU's links. When such a total does not fit, placid reports the value that made it overflow instead of wrapping around to a small number that would pass every check. The numbers involved are far beyond any real cluster; check the value for a typo (an extra digit, a wrong unit).";
    SlurmNameCollision = 40, "slurm-name-collision", "two names become the same Slurm QOS, account or partition",
        "sacctmgr lowercases QOS and account names, and `root` is the account every tree hangs from. Tiers whose names differ only in case, a team account equal to a cost center or another team's account, or an account named `root`, would silently merge into one Slurm object. A pool whose nodes have several GPU prices becomes one partition per price, `<pool>_<price>`, which must not be another pool's name. Rename one of them (a team can set `account \"...\"`).";
    SlurmGresType = 41, "slurm-gres-type", "a GPU model name that Slurm would re-parse in `Gres=`",
        "Slurm reads `Gres=gpu:<type>:<count>` by position and silently re-parses a type that looks like a count (`gpu:100:4`) or holds `.`: the node ends up with the wrong GPUs and no error. GPU models that reach Slurm start with a letter and use only letters, digits, `-` and `_`.";
    SlurmFeatureName = 42, "slurm-feature-name", "a name used as a Slurm node feature has a character constraints treat specially",
        "Racks, chassis, NVLink domains and pools become node features, which jobs select with `--constraint`. Slurm accepts any feature string, but in a constraint `.`, `&`, `|`, `[`, `]`, `*` and `,` are operators, so only letters, digits, `-` and `_` are safe.";
    SlurmCpuLayout = 43, "slurm-cpu-layout", "a node's harts, cores and sockets do not divide evenly",
        "slurm.conf describes a node as Sockets x CoresPerSocket x ThreadsPerCore = CPUs. When the inventory's harts are not a multiple of its cores, or its cores of its sockets, slurmd reports a different layout and slurmctld drains the node. Fix the inventory (re-probe the node).";
    SlurmTemplate = 44, "slurm-template", "an sbatch template does not parse or render",
        "Templates in the project's Slurm templates directory override the built-in `stage.sbatch.j2` and `submit.sh.j2`. They are minijinja templates and must parse and render with the stage context described in docs/targets/slurm.md.";
    SlurmUnevenBlocks = 45, "slurm-uneven-blocks", "a Slurm 24.05/24.11 block is larger than the base block size (warning)",
        "Before 25.05, Slurm's block topology treats every block as the base block size (the first `BlockSizes`), and a block smaller than the base is fatal. placid makes the base the smallest NVLink domain and groups nodes without NVLink into blocks of that size, so a larger NVLink domain, or a group that took a short rest of nodes, holds more nodes than `--segment` placement can use as one block. Make the NVLink domains the same size and the nodes without NVLink a multiple of it, or target Slurm 25.05+, whose topology.yaml accepts blocks of any size.";
    SlurmFairshareOverflow = 46, "slurm-fairshare-overflow", "a cost center's teams' shares sum past Slurm's 32-bit `Fairshare`",
        "A cost center's account gets `Fairshare=` the sum of its teams' shares, and sacctmgr stores fair shares as 32-bit numbers. Shares are relative weights: scale them all down, or split the cost center.";
    SlurmTemplateLimit = 47, "slurm-template-limit", "an sbatch template override runs too long or renders too much",
        "Template overrides are code that placid runs at every build: each render gets a fuel budget of 1,000,000 (minijinja charges about one per instruction and one per 64 bytes a template creates, so this bounds time and memory, string multiplication such as `\"x\" * 1000000000` included) and may write at most 1 MiB of script. The built-in templates use a small fraction of both. An override that loops over large ranges or builds huge strings is refused at its `templates=`; simplify it.";
    SlurmTemplateOverride = 48, "slurm-template-override", "a `templates=` directory or a file in it is not a usable template override",
        "`target \"slurm\" templates=` names a directory whose files replace the built-in `stage.sbatch.j2` and `submit.sh.j2`. Every file there must be one of those names (a misspelt file would leave the built-in template in use without a word), the directory must exist and hold at least one, and a template may not be a symlink: overrides are reviewed as code, and a link would let another file stand in for the one reviewed.";
    SlurmSplitMigrationPool = 49, "slurm-split-migration-pool", "a migration leaves a pool whose nodes have several GPU prices",
        "Slurm bills per partition, so placid splits a pool whose nodes have different GPU prices into one partition per price. A migration's phase scripts grow the source pool's one partition with the target nodes, which a split pool does not have. Migrate from a pool of one price (select its nodes by capacity or GPU model), or give the pool's nodes one price.";
    KubernetesInvalidName = 50, "kubernetes-invalid-name", "a name cannot become a valid Kubernetes object name",
        "Kubernetes object names are DNS-1123 labels: at most 63 lower-case letters, digits and `-`, starting and ending with a letter or digit. placid lower-cases names and turns `_` and `.` into `-` (tier `P0` becomes `p0`); a name that still is not valid after that, or that grows too long once placid adds a suffix (`p0-1000`), is refused. Rename the element.";
    KubernetesNameCollision = 51, "kubernetes-name-collision", "two elements become the same Kubernetes object",
        "After mapping names to Kubernetes object names (lower case, `_` and `.` as `-`), two different elements of the policy (`gpu_a` and `gpu.a`, or `P0` and `p0`) would produce the same object; the second would silently replace the first. Rename one of them.";
    PriorityClassOutOfRange = 52, "priority-class-out-of-range", "a tier's priority is above what a PriorityClass allows",
        "Kubernetes refuses user PriorityClasses above 1000000000 (`HighestUserDefinablePriority`); larger values are reserved for system-critical pods. Lower the tier's priority; only the order of tiers matters.";
    PriorityClassReservedName = 53, "priority-class-reserved-name", "a tier's name starts with the reserved `system-` prefix",
        "Kubernetes reserves PriorityClass names that start with `system-` for its own classes and refuses to create others. Rename the tier.";
    KubernetesInvalidLabel = 54, "kubernetes-invalid-label", "a label placid would write on nodes or objects is not a valid Kubernetes label",
        "Label keys are an optional DNS-subdomain prefix and a name of at most 63 characters (letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit); values follow the same rule for the name part. placid derives keys such as `placid.dev/pool-<pool>` and values such as rack names from the policy; shorten or rename the element at fault.";
    KueueQuotaInvalid = 55, "kueue-quota-invalid", "a ClusterQueue placid would emit breaks a rule Kueue's webhook enforces",
        "Kueue rejects ClusterQueues whose `lendingLimit` exceeds `nominalQuota`, that set borrowing or lending limits without a cohort, or whose flavor resources are not listed in the order of `coveredResources`. placid derives quotas from teams' shares and tiers' reservations; the message names the quota at fault.";
    KueueLimitExceeded = 56, "kueue-limit-exceeded", "the policy needs more Kueue objects or entries than Kueue accepts",
        "Kueue caps a ClusterQueue at 64 flavors per resource group and a ResourceFlavor at 8 node labels and 8 taints; a Topology has at most 16 levels. Merge pools or split the cluster into several projects.";
    AlertNotExpressible = 57, "alert-not-expressible", "an alert cannot be written as a Prometheus rule",
        "A threshold relative to a migration baseline (`of-baseline`) has no meaning in a standing Prometheus alert: there is no baseline to compare with. Use an absolute value or a percentage.";
    KueueEmptyReservedQueue = 58, "kueue-empty-reserved-queue", "a never-preempted tier reserves no GPUs, so its Kueue queue would admit nothing",
        "On Kubernetes, a tier that is never preempted runs in a ClusterQueue of its own that holds only the capacity the tier reserves and never lends or borrows: capacity shared through the cohort could be reclaimed, which is preemption. A never-preempted tier without `reserve` would get a queue with no quota, and Kueue would admit none of its jobs. Give the tier a `reserve pool=\"...\" gpus=N` (one per pool it runs in).";
    KubernetesOverlappingReservations = 59, "kubernetes-overlapping-reservations", "a node is in two pools where tiers reserve GPUs",
        "On Kubernetes, a pool where a tier reserves GPUs taints its nodes `<prefix>/reserved=<pool>:NoSchedule`, so that only that pool's flavor reaches them. A node can carry one taint per key and effect, so a node in two such pools cannot be fenced for both. Reserve GPUs in pools that share no nodes.";
    TooManyPredicates = 60, "too-many-predicates", "a score has more filters than the Wasm ABI can report",
        "Each filter of a score is one bit of the node's failure mask, a `u32` in placid ABI v1, so a score has at most 32 filters. Combine related conditions with `&&`.";
    InvalidEmittedModule = 61, "invalid-emitted-module", "an emitted Wasm module failed validation",
        "placid validates every module it emits with wasmparser before writing it. This is a bug in placid; please report it with the score that triggers it.";
    PluginRefused = 62, "plugin-refused", "a Wasm scoring plugin was refused before instantiation",
        "Hosts load only modules of at most 1 MiB whose function bodies are at most 256 KiB each, that validate, import nothing, export a memory with a maximum within the host's limit, export `placid_abi_version` = 1 and `placid_score_batch` with the ABI v1 signature, carry a `placid.meta` section that agrees with them, and compile within the host's compile deadline (2 s by default) (docs/wasm-abi.md). Rebuild the plugin with `placid build`.";
    PluginFailed = 63, "plugin-failed", "a Wasm scoring plugin trapped or ran out of time",
        "A call of `placid_score_batch` trapped (out-of-bounds access, `unreachable`), exceeded its time limit (epoch deadline) or its memory limit. The request fails; the host stays up and the next request gets a fresh call.";
    TooManyPenalties = 64, "too-many-penalties", "a score has more penalties than a Wasm plugin may hold",
        "Each penalty of a score is code in its plugin's one function, which every host compiles before it can answer; compile time grows faster than the function, so a score of 80,000 penalties builds in seconds but keeps a host compiling for minutes. A score has at most 256 penalties. Penalties that share a condition can be merged into one whose amount is their sum.";
    EmittedModuleTooLarge = 65, "emitted-module-too-large", "a score's Wasm plugin would be larger than a host loads",
        "Hosts refuse modules above 1 MiB and function bodies above 256 KiB before compiling them, so that loading a plugin takes well under a second; placid refuses to emit such a module. The score's expression, filters and penalties together are too large: simplify them, or split the score into smaller ones.";
    PluginResultInvalid = 66, "plugin-result-invalid", "a Wasm scoring plugin returned a feasible count outside 0..=n",
        "`placid_score_batch` returns how many of the `n` nodes of a batch passed every filter. Hosts do not trust a plugin's answer: a count above `n`, or below zero (hosts never pass a negative `n`, so even the ABI's error code -1 is wrong here), fails the call like a trap (E063) instead of being used. Rebuild the plugin with `placid build`; a hand-written module must follow docs/wasm-abi.md.";
    ExtenderRequestTooLarge = 67, "extender-request-too-large", "an extender request is larger than the extender accepts",
        "`placid extender` answers 413 with a JSON error to a body above `--max-body-mib` (8 MiB by default) or a request that lists more than `--max-nodes` nodes (15,000 by default, three times the 5,000 nodes Kubernetes supports in one cluster). kube-scheduler sends only the nodes that passed its own filters, at most a few hundred by default (`percentageOfNodesToScore`); with `nodeCacheCapable: true` it sends only their names. Raise the limits only for a larger cluster.";
    ExtenderOverloaded = 68, "extender-overloaded", "the extender is already serving as many requests as it may",
        "`placid extender` works on at most `--concurrency` requests at once (8 by default), on threads apart from those that accept connections, and answers 503 with a JSON error rather than queueing another: kube-scheduler treats any error as a failed call (a filter retries the pod later, a prioritize is skipped), which is better than an answer after its 5 s timeout. Large requests (a body above 64 KiB, or of unknown length) may take only half of the places, rounded up, so small ones are still answered while large ones run. kube-scheduler sends one request at a time per scheduling profile; raise `--concurrency` if a real scheduler gets 503.";
    ExtenderDeadline = 69, "extender-deadline", "an extender request ran past its deadline",
        "Every request must be answered within `--timeout-ms` (5 s by default, kube-scheduler's `httpTimeout`) of its arrival: reading the body and scoring count, and the plugin is interrupted (epoch deadline) when the time is up. The extender answers 503 with a JSON error; a slow client or a plugin that does not finish cannot hold the extender longer than that.";
    DuplicateInventoryNode = 70, "duplicate-inventory-node", "two inventory files describe the same node",
        "`placid inventory merge` combines one file per node; a host name may appear in only one of them. Usually a node was probed twice under the same name, or two hosts share a host name.";
    InconsistentDomain = 71, "inconsistent-nvlink-domain", "the nodes of one NVLink domain or chassis disagree",
        "All GPUs of an NVLink domain reach each other over NVLink, so the domain's nodes have the same GPU model, and the nodes of one chassis (NVLink tray) share one domain. A node with no GPU cannot be in a domain.";
    DriftDomain = 72, "drift-nvlink-domain", "a probed node is in another NVLink domain than declared",
        "The probe reads the NVLink domain from the GPU fabric (cluster UUID and clique id) or from its site configuration. Update the declared inventory, or fix the node's fabric or site file.";
    DriftArch = 73, "drift-arch", "a probed node has another CPU architecture than declared",
        "The declared architecture decides images and pools; a node that is really another architecture would run the wrong binaries.";
    DriftGpus = 74, "drift-gpus", "a probed node has another number or model of GPUs than declared",
        "GPU counts and models drive pools, reservations and generated gres.conf; a node whose GPUs differ (a failed GPU, a swapped board) makes them wrong.";
    DriftMig = 75, "drift-mig", "a probed GPU has another MIG mode or MIG layout than declared",
        "MIG mode and instances decide which classes a GPU can serve. Re-partition the GPU, or declare what it has.";
    DriftNvlink = 76, "drift-nvlink", "a probed GPU has other NVLink links than declared",
        "Missing or slower NVLink links (a link down, a wrong cable tray) break the bandwidth that NVLink classes were promised.";
    ProbeUnreadable = 77, "probe-unreadable", "the probe could not read or understand a system file",
        "`placid-probe` reports files under /proc and /sys that are missing, unreadable or garbled and leaves the fields they feed out, instead of failing.";
    ProbeFieldMissing = 78, "probe-field-missing", "the probe could not determine some inventory fields",
        "Without NVML (no NVIDIA driver, or no libnvidia-ml) the probe reports GPUs from PCI sysfs only and names the fields it could not fill in (model, memory, MIG, NVLink).";
    DriftNodeSet = 79, "drift-node-set", "probed and declared inventories do not list the same nodes",
        "A probed node that is not declared, or a declared node without a probe file, is reported so the inventory can be brought up to date.";
    MigrationTargetTooSmall = 80, "migration-target-too-small", "a migration's target pool cannot hold the migrated workload at full ramp",
        "At the last phase all migrated work runs on the target pool. The workload is the GPUs the migrated classes' stages use on the source pool at once (GPUs x trials, summed over every plan, capped at the source pool's GPUs), or the whole source pool when no stage of a migrated class runs there. The target pool must have at least that many GPUs, since the acceptance gates compare throughput for an equal GPU count.";
    MetricNotPerPool = 81, "metric-not-per-pool", "a gate or trigger reads a metric whose query does not select a pool",
        "Gates and triggers measure the pool under migration: the metric's query names the pool as `$pool`, which placid replaces with the target pool (and, for `of=\"baseline\"` thresholds, with the source pool to measure the baseline). A baseline threshold on a query without `$pool` is an error, because the baseline cannot be measured; other gates and triggers get a warning, because they would watch the whole cluster.";
    MigrationPhasesNotReversible = 82, "migration-phases-not-reversible", "a migration's phases cannot be rolled back one step at a time",
        "Rolling back returns to the previous phase, so the share of work on the target pool must grow with every phase: `shadow` (0%) only first, then canaries, then ramps with strictly increasing weights, then `blue-green` (100%) only last.";
    MigrationPlatformMissing = 83, "migration-platform-missing", "a migrated class has no image for the target pool's architecture",
        "Every class a migration moves must declare `platforms` covering every architecture of the target pool's nodes, and an `image-platform` compatibility gate must name an architecture the target pool has.";
    DuplicateMigrationCondition = 84, "duplicate-migration-condition", "a migration gates or triggers on the same metric twice",
        "Each metric appears at most once among a migration's `accept` gates and once among its `rollback-when` triggers: each becomes one named AnalysisTemplate, and two thresholds on one metric are one threshold too many.";
    MigrationSamePool = 85, "migration-same-pool", "a migration moves work from a pool to itself",
        "`from` and `to` must name different pools.";
    MigrationNameInvalid = 86, "migration-name-invalid-for-kubernetes", "retired: a migration name Kubernetes refuses is reported as E050",
        "Retired: no diagnostic carries this code any more, and it stays in the registry so that it is never reused. It checked the names of Rollouts and AnalysisTemplates with a rule of its own (DNS-1123 subdomains of up to 253 characters, with `.`) that contradicted the one every other Kubernetes object follows. They are named through the Kubernetes target's one naming rule now: a migration, service or namespace name, or the name of a gate's or trigger's metric, that cannot name a Kubernetes object is reported as E050 (`kubernetes-invalid-name`), at the span of the element at fault.";
    OutputOverlapsProject = 90, "output-overlaps-project", "the build output would replace the project, a git repository or `/`",
        "`placid build -o DIR` replaces DIR whole, so DIR may not be `/`, the project directory or a directory around it, a directory holding a file the project reads (such as `policy/`), a git work tree, a bare repository, a `.git` directory or anything inside one, or a directory holding a repository at any depth. `--force` does not lift this: replacing any of them would delete sources or history. Write the output to a directory of its own, such as `generated/` beside the project (inside the same repository is fine).";
    OutputNotPlacid = 91, "output-not-placid", "the output directory holds files placid did not write",
        "`placid build -o DIR` replaces an existing DIR only when it is empty or holds exactly the tree of an earlier build: every file is one its `manifest.json` lists, with the same sha256, and there is nothing else (so a forged `manifest.json`, or a file added beside the build, does not count). That way a mistyped `-o` cannot delete someone's directory. Choose a new or empty directory, or pass `--force` to replace DIR anyway.";
    OutputNotDirectory = 92, "output-not-directory", "the output path is a file or a symbolic link",
        "`placid build -o` writes a directory tree and swaps it into place. It does not replace a file, nor a symbolic link, whose target it could not swap without replacing the link. Remove the file or link, or name the directory itself.";
    OutputUnwritable = 93, "output-unwritable", "an output file or directory could not be inspected or written",
        "placid writes the tree into a temp directory beside the output (`.placid-build-<pid>-...`) and swaps it into place, so the output's parent directory must be writable, on the same file system, with room for a second copy. The message gives the operating system's error. A write that fails leaves the previous output in place; when only removing the previous tree after the swap fails, the new tree is in place and the next build removes the leftover. `placid fmt` and `placid inventory merge` write each file to a temp file beside it and rename it over the file, so the file's directory must be writable too; a failed write leaves the file as it was.";
    StreamUnwritable = 94, "stream-unwritable", "standard output or standard error could not be written",
        "A write to stdout or stderr failed for a reason other than the reader going away, typically a full disk behind a redirect (`placid diff > report.md`). The output is incomplete, so the command exits with 2 whatever it found. A reader that goes away early (`placid check --format json | head -1`, a closed pipe) is not an error: the rest of the output is dropped and the command keeps its exit code.";
    InputUnreadable = 95, "input-unreadable", "a file or directory the command was given cannot be read",
        "A path named on the command line (the project directory, a directory of probed node files, a job file, the generated tree `verify` compares, a path to audit) does not exist or cannot be read. Nothing was checked, so the command exits with 2. Check the path and its permissions.";
    ScoreNotFound = 96, "score-not-found", "the command names a score the project does not have",
        "`placid score`, `placid extender` and `placid explain --wat` run one score's plugin. The name given with `--score` (or `--wat`) must be one the project declares; it may be left out only when the project has exactly one score. The command exits with 2.";
    JobInvalid = 97, "job-invalid", "a job parameter is malformed, unknown or missing",
        "Job parameters (`--job name=value`, `--job-file`) are the inputs the score's plugin declares in its `placid.meta`: each must be given once, with a value of the parameter's type (a number, a boolean, a known NVLink need or a rack or domain name). The command exits with 2.";
    CommandNotApplicable = 98, "command-not-applicable", "the command's options do not apply to this project",
        "The options ask for something this project cannot give: `build --stdout` prints the Kubernetes objects only, so it needs `--target kubernetes` and a project that declares `target \"kubernetes\"`. The command exits with 2; change the options or the project.";
    EnvironmentUnavailable = 99, "environment-unavailable", "something the command needs from this machine is missing",
        "The policy is fine, but the command needs a program or resource of the machine it runs on that is missing or busy: Graphviz `dot` for `graph --svg`, a free address for `extender --listen`, threads for the extender's runtime. The message names what failed; the command exits with 2.";
    NoFeasibleNode = 100, "no-feasible-node", "no node of the pool can ever host the job",
        "The engine (docs/semantics.md) filters a pool's nodes by the job's architecture and image platforms, NVLink need, minimum bandwidth, lanes and domain bisection, MIG profile, capacity kind and pinned nodes. When no node passes, even on an empty cluster, the job is rejected with this reason, and the checker reports a plan stage for which it is so (unless the class's own error, E005 for a platform its image lacks, E024, E032, E033, E165 or E166, says it already). Policy tests name it as `expect \"rejected\" reason=\"no-feasible-node\"`. Ask for a pool whose nodes fit the class, or relax the class.";
    ExceedsQuota = 101, "exceeds-quota", "a job or stage asks for more GPUs than its team can ever hold in the pool",
        "A team's jobs in a pool are limited to its guaranteed GPUs plus what it may borrow (a team with a backfill tier borrows what the other teams are guaranteed); a reserving tier's jobs in its reserved pool to the reservation. These are the numbers of `model/shares.rs` that the Kueue queues carry. A job above that limit waits forever, so the engine rejects it, and the checker reports a plan stage that asks for it. Lower the stage's `gpus`, raise the team's share, give the team a backfill tier, or reserve capacity for its tier.";
    ExceedsBudget = 102, "exceeds-budget", "a job alone costs more than its daily budget",
        "The engine charges a job its GPUs x run time x the GPU-hour price of the pool's dearest node against its team's and cost center's daily budgets. A job whose cost alone is above either budget can never be admitted and is rejected. Shorten the job, pick a cheaper pool, or raise the budget.";
    NeverPreemptedOnSpot = 103, "never-preempted-on-spot", "a stage of a never-preempted tier can run on spot capacity",
        "A tier with `preemption \"never\"` promises its jobs are never stopped, but the provider reclaims spot capacity at any time, so a stage of such a tier whose pool holds spot nodes breaks the promise. Restrict the stage with `capacity=\"reserved\"` or `capacity=\"on-demand\"`, move it to a pool without spot nodes, or give the tier a preemption window.";
    TestExpectationImpossible = 104, "test-expectation-impossible", "a policy test expects something no run can produce",
        "The checker asks the engine whether a test's expectation can hold at all: a job expected `placed` in a pool no node of which can host it, beyond its team's quota, or in more GPUs than one unit of its locality holds; a job expected `queued` for quota that its quota always admits. Such a test can never pass. Fix the expectation or the policy it describes.";
    TestFailed = 105, "test-failed", "a policy test's expectation does not hold",
        "`placid test` ran the test's jobs through the engine (docs/semantics.md) and what happened differs from the `expect`. The report shows the expected and the actual outcome at the test's span. Either the policy does not do what the test says, or the test is wrong. For an admission expectation, the job's workload (as the build's templates write it) went through the build's own admission policies, and the actual outcome is `admitted` or the refusals' messages (docs/targets/kubernetes.md, \"Admission in tests\").";
    TestStateInvalid = 106, "test-state-invalid", "a policy test's starting state cannot be set up",
        "A `running` job of a test must fit where it is put: on the named nodes or in the named pool, in free capacity. When it does not (more GPUs than the nodes have, a node outside the pool), the test cannot run, and `placid test` reports it as a failure with this code.";
    TraceNotText = 120, "trace-not-text", "a trace file is too large or not UTF-8 text",
        "A trace file (`--trace`, `--nodes`, `--pods`) is untrusted input: placid reads at most 16 MiB of an openb list and 500,000 jobs (32 MiB) of a placid trace (docs/limits.md), and only UTF-8 text. The span points at the first byte that is not UTF-8, or at the first job past the limit. Export the trace as UTF-8 CSV, or split a larger one.";
    TraceColumns = 121, "trace-columns", "a trace header names an unknown column or lacks a required one",
        "The first line of an openb node list names the columns `sn,cpu_milli,memory_mib,gpu,model`, and that of a pod list `name,cpu_milli,memory_mib,num_gpu,gpu_milli` plus, optionally, `gpu_spec` (absent: any GPU model) and `qos,pod_phase,creation_time,deletion_time,scheduled_time` (which the reproduction ignores). Any order is fine; an unknown or repeated column is an error rather than being skipped, so that a misspelt column cannot silently read as zero. A placid trace (docs/simulate.md) has the columns `job`, `submit`, `team`, `tier`, `gpus` and `run`, and optionally `class`, `pool`, `limit`, `tag`, `stage` and `after`.";
    TraceValue = 122, "trace-value", "a trace field is not a number in range",
        "Counts and sizes are whole non-negative numbers within the limits of docs/limits.md (for example at most 64 GPUs a node or a pod and `gpu_milli` at most 1000). A negative, fractional, empty or huge value is an error at the field. A pod's GPU request must also be one openb can mean: `gpu_milli` 0 exactly when `num_gpu` is 0, and 1000 whenever `num_gpu` is above 1 (only a one-GPU pod shares a GPU). In a placid trace, times are durations such as `90s` or `1h30m` (or whole seconds) up to ten years, `gpus` is at most 1,000,000, job names are unique and no stage waits for itself.";
    TraceUnknownGpuModel = 123, "trace-unknown-gpu-model", "a pod's gpu_spec names a GPU model no node has",
        "`gpu_spec` is a `|`-separated list of the GPU models a pod may run on, matched exactly against the `model` column of the node list. A model that no node has is almost always a typo or a node list of another cluster, so it is an error rather than a pod that can only fail.";
    TraceEmpty = 124, "trace-empty", "a trace file has no data rows",
        "A node list needs at least one node, a pod list at least one pod and a placid trace at least one job, below a header line.";
    TraceRow = 125, "trace-row", "a trace row is not well-formed CSV or has the wrong number of fields",
        "Every row has as many comma-separated fields as the header. Quote a field that holds a comma. A placid trace may also hold comment lines starting with `#`.";
    SimulateScoreFailed = 126, "simulate-score-failed", "the score failed while the simulator ranked nodes",
        "`placid simulate --placement score:NAME` ranks every pod's feasible nodes with the score's Wasm plugin. A plugin that traps or returns the wrong number of scores stops the run, since the figures would otherwise mix placements; the message gives the plugin's error.";
    TraceReference = 127, "trace-reference", "a placid trace names a team, tier, class, pool or stage that does not exist",
        "A placid trace is replayed against one policy, so its `team`, `tier`, `class` and `pool` values must be names that policy declares, and each stage an `after` names must be the `stage` of some job of the trace. The closest name is suggested.";
    RunTimeExceedsLimit = 130, "run-time-exceeds-limit", "a stage's run time is longer than its own or its tier's maximum",
        "A stage's expected `time=` may not exceed its `max-time=`, and neither may exceed its tier's `max-time` (three days when the tier declares none). The scheduler enforces the limit: Slurm kills a job at its `--time` and refuses one above the QOS `MaxWall`, so a plan that promises a longer run would be cut off. Raise the tier's `max-time`, or shorten the stage.";
    TopologyLevelsDoNotNest = 140, "topology-levels-do-not-nest", "an NVLink domain spans several racks, or a chassis several NVLink domains",
        "Topology levels must nest: every node of an NVLink domain in one rack. Kueue's Topology Aware Scheduling builds a tree of the levels (rack, NVLink domain, host) and places a gang in one unit of a level by walking it, and Slurm's `topology/tree` does the same with switches; a domain whose nodes sit in two racks (or some in a rack and some in none) belongs to two parents, so a `locality \"rack\"` gang could be split. Give the domain's nodes one `rack`, or, where one NVLink domain really spans racks, name the racks it spans as one rack. The chassis level (the Topology's level between NVLink domain and host, and the `locality \"chassis\"` unit) nests the same way: every node of a chassis in one NVLink domain.";
    ExtenderScoreUnnamed = 141, "extender-score-unnamed", "the Kubernetes extender names no score, and the project has none or several",
        "`extender` in the Kubernetes target deploys the scheduler extender that serves one score's Wasm plugin to kube-scheduler. With exactly one `score` in the project, that score is meant; otherwise the extender must name it with `score=\"NAME\"`, or, when the project declares no score, it has nothing to serve and is refused.";
    ScoreWithoutExtender = 142, "score-without-extender", "a project with scores and a Kubernetes target deploys no extender (warning)",
        "A score places GPU pods on Kubernetes only through the scheduler extender, which the Kubernetes target deploys when it has an `extender image=... ignorable=...` child. Without it the scores still rank Slurm plan stages and the engine's placements, but nothing in the cluster reads them, which the warning says at the target. Add the `extender`, or ignore the warning when the cluster should use kube-scheduler's own scoring.";
    PluginTooLarge = 143, "plugin-too-large", "a score's Wasm module is too large for the extender's ConfigMap",
        "The Kubernetes target ships the extender's plugin in a ConfigMap (`binaryData`), and Kubernetes stores an object in one etcd value of at most 1 MiB, base64 included, so a module over about 768 KiB cannot be deployed. Scores compile to a few KiB; one this large has an expression far beyond what a scheduler should evaluate per node. Simplify the score.";
    BackfillInStrictQueue = 144, "backfill-in-strict-queue", "a backfilling tier shares a team's Kubernetes queue with a tier that may not backfill (warning)",
        "Kueue keeps the order of a ClusterQueue's workloads or not for the whole queue (`queueingStrategy`), and each team has one ClusterQueue for every tier of the team that has no reserved queue of its own. `backfill #false` promises that a tier's jobs never start out of order, and `backfill #true` only allows skipping, so a team queue holding both kinds is `StrictFIFO`: the backfilling tier's jobs then wait in order on Kubernetes, unlike on Slurm and in the engine. This warning is at the `backfill #true` that loses its effect there. Let both tiers backfill, or give them to different teams.";
    StepsImageMissing = 145, "steps-image-missing", "a plan promotes, and the Kubernetes target names no image for its steps",
        "On Kubernetes a plan is an Argo WorkflowTemplate, and a stage's `promote top= by=` is a step of it that ranks the trials' results files and hands the winners to the stages after it. That step runs a short POSIX shell script (the same one as the Slurm target's promotion job), so it needs an image with `sh`, `awk` and `sort`, which the target's `steps image=` names. placid does not pick an image for a cluster: add `steps image=\"...\"` to the target.";
    StageScoreNotServed = 146, "stage-score-not-served", "a stage's score is not the one the Kubernetes extender serves (warning)",
        "kube-scheduler calls one scheduler extender, which serves one score's plugin (`extender score=`). A stage whose `score=` names another score, or any stage score when the target deploys no extender, is placed on Kubernetes by kube-scheduler's own scoring: its workload template does not ask for placid's scheduler. The engine and `placid test` rank it by its score. Serve that score with the extender, or accept kube-scheduler's order there.";
    TelemetryNotDeployed = 147, "telemetry-not-deployed", "the deployed Kubernetes extender reads no Prometheus for the policy's telemetry (warning)",
        "The Kubernetes target's extender Deployment reads the policy's `telemetry` (queries, smoothing, throttle, and the nodes' NVLink domains, from a ConfigMap) only from the Prometheus its `extender prometheus=\"HOST:PORT\"` names. Without it the deployed extender scores `node.nvlink_utilization` and `domain.nvlink_utilization` as 0 and throttles nothing; the block still takes effect in `placid extender DIR --prometheus ADDR` and in `placid simulate --telemetry`. Name the cluster's Prometheus, or accept static figures on Kubernetes.";
    ExtenderPrometheusWithoutTelemetry = 148, "extender-prometheus-without-telemetry", "the Kubernetes extender names a Prometheus, and the policy declares no telemetry",
        "`extender prometheus=` tells the deployed extender where to read the policy's `telemetry` from. Without a `telemetry` block there is nothing to read, and the address would be accepted and ignored. Declare `telemetry` (docs/language.md, \"Telemetry\"), or remove `prometheus=`.";
    KubernetesYamlUnwritable = 149, "kubernetes-yaml-unwritable", "an object of the Kubernetes tree could not be written as YAML",
        "Every Kubernetes object placid emits is its own typed content, which always serialises; an object that does not is a bug in placid. The diagnostic points at the policy element whose objects were being written; please report it with the policy that triggers it.";
    TelemetryDurationOutOfRange = 150, "telemetry-duration-out-of-range", "a telemetry half-life, maximum age, cache TTL or throttle hold is out of range",
        "`telemetry`'s `half-life`, `max-age` and `ttl` are between one second and one day, and a `throttle`'s `for` between zero and one day. A longer figure would smooth or keep telemetry that no longer describes the cluster, and a zero half-life, age or TTL would mean no smoothing, no usable sample or a query per request. Give a duration in range, such as `half-life=\"5m\"`.";
    TelemetryCacheOutlivesAge = 151, "telemetry-cache-outlives-age", "telemetry's cache TTL is longer than its maximum sample age",
        "The extender reuses one answer of Prometheus for `ttl`, and a sample older than `max-age` falls back to the static figure. A TTL above the maximum age would keep serving an answer whose samples are already too old, and the static figure would flap in and out between refreshes. Make `ttl` at most `max-age`.";
    ThrottleThresholdOutOfRange = 152, "throttle-threshold-out-of-range", "a throttle's `domain-nvlink-above` is not a fraction between 0 and 1",
        "`throttle domain-nvlink-above=` is compared with `domain.nvlink_utilization`, the domain's NVLink traffic over its capacity, which is a fraction from 0 to 1. A threshold of 0 or below would throttle every domain with any traffic, and one above 1 never: write the saturation as a fraction, 0.85 for 85 %.";
    TelemetryQueryInvalid = 153, "telemetry-query-invalid", "a telemetry query is empty, too long or spans lines",
        "`node-query` and `domain-query` are single PromQL expressions of at most 4,096 bytes, without control characters (the extender sends them in a URL). Leave the node out to read the generated recording rules (`placid:nvlink_node_utilization:ratio`, `placid:nvlink_domain_utilization:ratio`).";
    ThrottleWithoutDomains = 154, "throttle-without-domains", "a throttle rule in a project without NVLink domains (warning)",
        "The throttling rule acts on NVLink domains, and the inventory declares none, so the rule can never refuse a job. This is a warning: drop the rule, or declare the nodes' `nvlink-domain`.";
    ScoreNotOnSlurm = 155, "score-not-on-slurm", "a stage's score cannot rank nodes on Slurm (warning)",
        "A plan stage's `score=` ranks the nodes its trials may run on with the score's Wasm plugin, which the Kubernetes target hands to kube-scheduler through placid's scheduler extender. Slurm has no node-scoring hook placid can program (its node order is the partition's node weights and the scheduler's own), so on Slurm the stage is placed without the score. This is a warning at `score=` when the Slurm target is enabled: accept Slurm's order for the stage, or run it on Kubernetes where the score applies (docs/language.md, \"Where each setting takes effect\").";
    ExemptNotOnKubernetes = 156, "exempt-not-on-kubernetes", "a tier's `exempt` has no effect on Kubernetes (warning)",
        "`preemption exempt=` is the least time a tier's job runs before it may be preempted. Slurm carries it (the QOS's `PreemptExemptTime`) and the engine honours it, but Kueue preempts a workload whatever it has run and has no such setting, so on Kubernetes the tier's jobs may be preempted at once. This is a warning at the tier's `preemption` when the Kubernetes target is enabled: accept it there, or drop `exempt`.";
    StageExceedsOneCell = 157, "stage-exceeds-one-cell", "a stage asks for more GPUs than Kueue can admit on one flavor of its pool (warning)",
        "The Kubernetes target gives each cell of the inventory (nodes the same pools reach, at one price and capacity kind) its own ResourceFlavor, and Kueue admits all pods of a workload on one flavor, within the quota its queue holds there. A pool of several cells (spot and on-demand nodes, say) therefore admits no workload larger than its largest cell's quota for the queue, while Slurm and the engine place a job across the pool's cells. This is a warning at the stage's `gpus` when the Kubernetes target is enabled and the engine would run the stage: on Kubernetes it would stay pending. Use at most that many GPUs per trial, or make the pool one cell.";
    TierBudgetBelowReservation = 160, "tier-budget-below-reservation", "a tier's daily budget cannot pay for its reserved GPUs all day (warning)",
        "A tier's `budget daily=` limits what all its jobs together may spend in a day, billed at the price of the nodes they run on. When the tier's reservations, priced at each pool's most expensive node for 24 hours, cost more than that budget, the reserved GPUs, which are paid for around the clock, stand idle once the budget is spent. This is a warning, since capping the spend may be intended: raise the budget, or reserve fewer GPUs.";
    TierBudgetNeverBinds = 161, "tier-budget-never-binds", "a tier's daily budget is above what its teams may spend together (warning)",
        "When every team that may use a tier has a daily budget, the tier's jobs can never spend more than the sum of those budgets, so a tier budget above that sum never holds a job back: it is a setting that does nothing. This is a warning: lower the tier budget to the spend it should cap, or drop it.";
    RouteTagOverlap = 162, "route-tag-overlap", "two routes name the same tag",
        "`route tag= tier=` maps the jobs carrying a tag to a tier (and class). Each tag has one route: two routes of one tag would send its jobs to different tiers depending on which rule a reader took first, so the second is refused. Remove one, or give it another tag.";
    RouteToNoTeam = 163, "route-to-no-team", "a route's tier may be used by no team",
        "A job carrying a route's tag runs at the route's tier only when its team may use that tier (the team's `tiers`); other teams' jobs are refused at submission with the policy's message. A route to a tier that no team may use can only refuse jobs, so it is an error. Route the tag to a tier the teams use, or add the tier to a team's `tiers`.";
    LanesUnavailable = 165, "lanes-unavailable", "a class asks for more NVLink lanes than any node's links have",
        "A class's `nvlink lanes=` is the number of NVLink links it needs between every pair of linked GPUs of a node. A node offers the smallest link count of its GPUs' links (`Node::nvlink_lanes`); the engine and the Slurm constraint (`lanes_N` node features) only place the class on nodes offering at least its lanes. When no node of the inventory offers that many, the class can never run, so it is an error naming the largest figure available. Lower `lanes` to that figure, or add nodes with more links.";
    BisectionUnavailable = 166, "bisection-unavailable", "a class asks for more NVLink bisection bandwidth than any NVLink domain has",
        "A class's `nvlink min-bisection=` is the bisection bandwidth it needs of the NVLink domain a job runs in: the NVLink bandwidth of the weaker half of the domain's GPUs together (`Model::domain_bisection`, docs/language.md). The engine places gangs at `nvlink-domain` locality, and the Slurm constraint lists, only the domains with at least that much. When no domain of the inventory has it, the class can never run, so it is an error naming the largest figure available. Lower `min-bisection` to that figure, or join more GPUs into a domain.";
    BisectionOutsideDomain = 167, "bisection-outside-domain", "`min-bisection` on a class whose jobs need not stay in one NVLink domain",
        "The bisection bandwidth of an NVLink domain only bounds a job that runs inside that one domain, so `nvlink min-bisection=` needs `locality \"nvlink-domain\"` (the default when NVLink is required). At another locality a job spans domains or stays on one node, and the figure would restrict placement without saying anything true about the job's links. Set `locality \"nvlink-domain\"`, or use `min-bandwidth` (per GPU) instead.";
    BackfillOffOnSlurm = 168, "backfill-off-on-slurm", "`backfill #false` cannot be enforced per tier on Slurm (warning)",
        "Slurm's backfill is the scheduler plugin of the whole cluster (`SchedulerType=sched/backfill`, tuned by the cluster-wide `SchedulerParameters`): the partition options and QOS flags of 22.05 and 24.11 include none that exempts a partition or QOS from it (`NoReserve` only stops a QOS's jobs reserving resources in the backfill plan), and `PriorityTier` only orders partitions for the main loop, which backfill then passes. So on Slurm a tier's jobs may still start out of priority order through backfill, though never so that they delay the expected start of a higher-priority job. The Slurm target keeps the full time limit of such a tier's jobs (no `--time-min`), and the engine never backfills them. This is a warning at `backfill` when the Slurm target is enabled: drop `backfill #false`, or accept that backfill is cluster-wide (docs/targets/slurm.md).";
    StageCommandInvalid = 170, "stage-command-invalid", "a stage's command, environment value or working directory cannot be run as written",
        "What a stage runs reaches shell scripts (Slurm) and YAML (Kubernetes) word for word, so its texts may not hold control characters such as a newline, nor `{{`, which Argo Workflows would substitute in a plan's WorkflowTemplate (read the trial from `PLACID_TRIAL` instead); placid runs a command without a shell: `command` is the program and its arguments, each its own string (`command \"python3\" \"train.py\" \"--lr\" \"0.1\"`), never one line for a shell to split. A `workdir` is an absolute path. See docs/stages.md.";
    StageEnvInvalid = 171, "stage-env-invalid", "a stage's environment variable has an invalid name, is given twice, or is one of placid's own",
        "`env NAME=\"value\"` sets variables for a stage (or, on a class, for its stages). A name is letters, digits and `_`, not starting with a digit, given once, and not starting with `PLACID_`: placid sets those itself (the trial, the checkpoint cadence and directory, the results file; docs/stages.md), and a stage may not override them. Values are strings.";
    StageWithoutImage = 172, "stage-without-image", "a stage runs on Kubernetes but neither it nor its class names an image",
        "A pod needs a container image; the API server refuses a pod without one. With the Kubernetes target enabled, every stage needs `image` on the stage or on its class.";
    StageWithoutCommand = 173, "stage-without-command", "a stage runs on Slurm but neither it nor its class names a command (warning)",
        "A Slurm job runs a program, and placid's stage script runs the stage's `command`. A stage that names none (on itself or its class) runs the program in the submitter's `PLACID_STAGE_COMMAND`, which then must be set for every stage alike. Give the stage a `command` (docs/stages.md).";
    StageResourcesUnavailable = 174, "stage-resources-unavailable", "a stage asks more CPU cores or memory per node than enough nodes of its pool have",
        "`cpus` and `memory` are what each node (each pod) of a trial needs, and a trial spans as many nodes as its GPUs need at the size of its pool's smallest GPU node (`Model::gang`, the `--nodes` of its Slurm script and the pods of its Kubernetes gang). When fewer GPU nodes of the stage's pool than that have both that many CPU threads and that much memory, the schedulers can never start the stage: lower the request, use fewer GPUs per trial, or choose a pool with larger nodes.";
}
