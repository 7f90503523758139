//! The registry of stable diagnostic codes. Each code is declared once here, with the name
//! that says what it flags, a one-line summary and the explanation that becomes its entry in
//! `docs/errors.md` (a test keeps that file in step with this table).
//!
//! Ranges: E001-E019 syntax and lowering, E020-E039 checker rules, E040-E049 Slurm target,
//! E050-E059 Kubernetes target, E060-E069 Wasm, E070-E079 inventory and drift,
//! E080-E089 migrations, E090-E099 workflow (diff, verify).

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
    EmptyPool = 20, "empty-pool", "a pool selects no node of the inventory",
        "A pool whose selector matches no node cannot host anything. Check the selector against the inventory (`placid graph` shows domains and racks).";
    ReservationExceedsPool = 21, "reservation-exceeds-pool", "a reservation asks for more GPUs than its pool has",
        "A tier reserves GPUs in a pool; the reservation must fit in the pool's GPUs.";
    ReservationsExceedPool = 22, "reservations-exceed-pool", "the reservations in one pool exceed its GPUs together",
        "All tiers' reservations in one pool together must fit in the pool.";
    DomainTooSmall = 23, "domain-too-small", "a stage that needs NVLink locality fits in no single NVLink domain of its pool",
        "A class with `locality \"nvlink-domain\"` (or NVLink required) keeps each job inside one NVLink domain. If the stage needs more GPUs than the largest domain of its pool has, it can never run.";
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
        "A stage's GPUs per trial must fit in its pool.";
    MigUnavailable = 32, "mig-unavailable", "a class needs a MIG profile that no GPU of the pool offers",
        "A class with `mig` needs MIG-enabled GPUs with that profile in every pool its stages use.";
    NvlinkUnavailable = 33, "nvlink-unavailable", "a class that requires NVLink runs in a pool without NVLink",
        "`nvlink \"required\"` needs nodes with NVLink links (and enough bandwidth) in the pool.";
    ScoreFeatureUnavailable = 34, "score-feature-unavailable", "a score uses a node feature the inventory does not provide",
        "A score expression reads a node feature that no node of the inventory has; every node would score as missing.";
    TestExpectationFails = 35, "test-expectation-invalid", "a policy test names something that does not exist or cannot be checked",
        "`test` blocks describe a job and the placement or rejection the team expects; every name they use must resolve.";
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
}
