//! The draft of an inventory entry: one node as either inventory form writes it, read but not
//! yet checked, and [`NodeDraft::validate`], the one place the inventory's rules are applied.
//! Reading (the sibling `kdl` and `json` modules) only takes values of the type the form gives
//! them; every rule on what the values mean (names, keywords, counts of at least 1, CPU
//! lists, quantities, prices, GPU indices, NVLink peers, MIG, profile verdicts, labels) is
//! here, so both forms accept the same nodes and report one mistake with the same code.
//!
//! Values carry the span they were read from: their own in KDL, the node's object in JSON,
//! where serde gives no positions inside it. A value that could not be read (a string where
//! a number belongs, a missing required property) has been reported by the reader, and
//! leaves its element out without a second diagnostic.

use crate::cpulist::CpuSet;
use crate::diag::{Code, Diagnostic};
use crate::lower::context::Cx;
use crate::lower::inventory::{InventoryEntry, InventoryFormat};
use crate::lower::reader::money_help;
use crate::lower::values;
use crate::model::{Arch, CapacityKind, Cpu, Gpu, Mig, MigInstances, Node, NumaNode, NvLink, ProfileVerdict, VectorExt, Verdict};
use crate::name::{LabelKey, Name};
use crate::span::{Span, Spanned};
use crate::units::{Bandwidth, Bytes};

/// A value every element of its kind has: `None` when it is missing or could not be read
/// (the reader reported which).
pub(super) type Required<T> = Option<Spanned<T>>;

/// A value a file may leave out: `None` when it does, `Some(None)` when it is given but could
/// not be read (the reader reported why).
pub(super) type Given<T> = Option<Option<Spanned<T>>>;

/// A node as read.
pub(super) struct NodeDraft {
    /// The form it is written in, for help lines that show its syntax.
    pub form: InventoryFormat,
    /// Where the node is: its host name in KDL, its object in JSON.
    pub span: Span,
    pub name: Required<String>,
    pub arch: Required<String>,
    pub rack: Given<String>,
    pub chassis: Given<String>,
    pub domain: Given<String>,
    pub capacity: Given<String>,
    /// `None` when the node says nothing of its CPU.
    pub cpu: Option<CpuDraft>,
    pub memory: Given<String>,
    /// The GPU-hour price's digits, in the project's currency.
    pub cost: Given<String>,
    /// The egress price's digits (per TB), in the project's currency.
    pub egress: Given<String>,
    pub gpus: Vec<GpuDraft>,
    pub labels: Vec<LabelDraft>,
}

/// A host CPU as read.
pub(super) struct CpuDraft {
    pub harts: Required<u32>,
    pub cores: Given<u32>,
    pub sockets: Given<u32>,
    pub isa: Given<String>,
    pub numa_nodes: Given<u32>,
    pub model: Given<String>,
    pub vector: Given<String>,
    pub profiles: Vec<ProfileDraft>,
    pub numa: Vec<NumaDraft>,
}

/// A RISC-V profile verdict as read.
pub(super) struct ProfileDraft {
    /// Where the profile is, for a verdict its lists contradict.
    pub span: Span,
    pub profile: Required<String>,
    pub verdict: Required<String>,
    /// Extension names.
    pub missing: Given<Vec<String>>,
    /// Extension names.
    pub unverifiable: Given<Vec<String>>,
}

/// A NUMA node as read.
pub(super) struct NumaDraft {
    pub id: Required<u32>,
    /// A CPU list as the kernel writes it (`0-7,16-23`).
    pub cpus: Given<String>,
    pub memory: Given<String>,
}

/// A GPU as read.
pub(super) struct GpuDraft {
    /// Where the GPU is: its `gpu` node in KDL, the node's object in JSON.
    pub span: Span,
    pub index: Required<u32>,
    pub model: Required<String>,
    pub memory: Given<String>,
    pub uuid: Given<String>,
    pub pci: Given<String>,
    pub numa: Given<u32>,
    pub mig: Given<String>,
    /// In the order written, so a misplaced one is reported at the first.
    pub instances: Vec<MigDraft>,
    pub links: Vec<LinkDraft>,
}

/// MIG instances of one profile as read.
pub(super) struct MigDraft {
    pub span: Span,
    pub profile: Required<String>,
    pub count: Given<u32>,
}

/// An NVLink connection as read.
pub(super) struct LinkDraft {
    pub span: Span,
    pub peer: Required<u32>,
    pub links: Given<u32>,
    pub bandwidth: Required<String>,
}

/// A node label as read.
pub(super) struct LabelDraft {
    pub key: Required<String>,
    pub value: Required<String>,
}

const ARCHES: &[(&str, Arch)] = &[("riscv64", Arch::Riscv64), ("x86_64", Arch::X86_64), ("aarch64", Arch::Aarch64)];
const CAPACITIES: &[(&str, CapacityKind)] =
    &[("reserved", CapacityKind::Reserved), ("on-demand", CapacityKind::OnDemand), ("spot", CapacityKind::Spot)];
const MIG_MODES: &[(&str, bool)] = &[("disabled", false), ("enabled", true)];

/// Checks a value the file may leave out: `Some(None)` when it is left out, `Some(Some(_))`
/// when it passes `check`, `None` when it does not or could not be read (reported), so `?`
/// drops the element.
fn optional<T, U>(value: Given<T>, check: impl FnOnce(Spanned<T>) -> Option<U>) -> Option<Option<U>> {
    match value {
        None => Some(None),
        Some(value) => value.and_then(check).map(Some),
    }
}

/// Checks every element of a list, all of them even after one fails: the valid ones, and
/// whether all were.
fn each<D, T>(cx: &mut Cx, drafts: Vec<D>, mut validate: impl FnMut(D, &mut Cx) -> Option<T>) -> (Vec<T>, bool) {
    let mut valid = Vec::with_capacity(drafts.len());
    let mut all = true;
    for draft in drafts {
        match validate(draft, cx) {
            Some(element) => valid.push(element),
            None => all = false,
        }
    }
    (valid, all)
}

/// A value that needs no check beyond its type.
fn plain<T>(value: Spanned<T>) -> Option<T> {
    Some(value.value)
}

impl NodeDraft {
    /// Applies every rule of the inventory to the node, reporting each broken one. Every value
    /// is checked even after one fails, so a file shows all its mistakes at once; the node is
    /// left out when any fails.
    pub(super) fn validate(self, cx: &mut Cx) -> Option<InventoryEntry> {
        let name = self.name.and_then(|name| values::name(cx, &name));
        let arch = self.arch.and_then(|arch| values::keyword(cx, &arch, Some("arch"), ARCHES));
        let rack = optional(self.rack, |rack| values::name(cx, &rack));
        let chassis = optional(self.chassis, |chassis| values::name(cx, &chassis));
        let domain = optional(self.domain, |domain| values::name(cx, &domain));
        let capacity = optional(self.capacity, |capacity| values::keyword(cx, &capacity, Some("capacity"), CAPACITIES));
        let cpu = match self.cpu {
            Some(cpu) => cpu.validate(cx),
            None => Some(Cpu::default()),
        };
        let memory = optional(self.memory, |memory| values::quantity(cx, &memory, Bytes::parse));
        let currency = cx.currency;
        let help = || match self.form {
            InventoryFormat::Kdl => money_help(currency),
            InventoryFormat::Json => format!("write the price as a decimal string in {}, such as \"3.10\"", currency.code()),
        };
        let cost = optional(self.cost, |digits| values::amount(cx, currency, &digits, help).map(|money| money.value));
        let egress = optional(self.egress, |digits| values::amount(cx, currency, &digits, help).map(|money| money.value));
        let gpus = validate_gpus(cx, self.gpus);
        let (labels, labels_valid) = each(cx, self.labels, LabelDraft::validate);
        let node = Node {
            name: name?.value,
            span: self.span,
            arch: arch?,
            rack: None,
            chassis: chassis?.map(|chassis| chassis.value),
            domain: None,
            capacity: capacity?.unwrap_or(CapacityKind::OnDemand),
            cost_per_gpu_hour: cost?,
            cost_per_egress_tb: egress?,
            cpu: cpu?,
            memory: memory?,
            gpus: gpus?,
            labels: labels.into_iter().collect(),
        };
        labels_valid.then_some(InventoryEntry { node, rack: rack?, domain: domain? })
    }
}

/// The GPUs of a node, sorted by index, or `None` when one is invalid, two share an index or
/// an NVLink leads elsewhere than to another GPU of the node. Indices and peers are checked
/// among the GPUs that are valid on their own.
fn validate_gpus(cx: &mut Cx, drafts: Vec<GpuDraft>) -> Option<Vec<Gpu>> {
    let (mut gpus, mut ok) = each(cx, drafts, GpuDraft::validate);
    gpus.sort_by_key(|gpu| gpu.index);
    for pair in gpus.windows(2) {
        if pair[0].index == pair[1].index {
            cx.error(
                Diagnostic::error(Code::DuplicateName, pair[1].span, format!("GPU {} is declared twice", pair[1].index))
                    .label("second declaration")
                    .with_secondary(pair[0].span, "first declared here")
                    .help("number the GPUs of a node 0, 1, 2, ..."),
            );
            ok = false;
        }
    }
    for gpu in &gpus {
        for link in &gpu.links {
            if link.peer == gpu.index || !gpus.iter().any(|other| other.index == link.peer) {
                cx.error(
                    Diagnostic::error(
                        Code::UnresolvedReference,
                        link.span,
                        format!("GPU {} has an NVLink to GPU {}, which is not another GPU of this node", gpu.index, link.peer),
                    )
                    .label("unknown peer")
                    .help("`peer=` names the index of another GPU of the same node"),
                );
                ok = false;
            }
        }
    }
    ok.then_some(gpus)
}

impl CpuDraft {
    fn validate(self, cx: &mut Cx) -> Option<Cpu> {
        let harts = self.harts.and_then(|harts| values::positive(cx, harts));
        let cores = optional(self.cores, |cores| values::positive(cx, cores));
        let sockets = optional(self.sockets, |sockets| values::positive(cx, sockets));
        let isa = optional(self.isa, plain);
        let numa_nodes = optional(self.numa_nodes, |count| values::positive(cx, count));
        let model = optional(self.model, plain);
        let vector_choices: Vec<(&str, VectorExt)> = VectorExt::ALL.iter().map(|kind| (kind.as_str(), *kind)).collect();
        let vector = optional(self.vector, |vector| values::keyword(cx, &vector, Some("vector"), &vector_choices));
        let (mut profiles, profiles_valid) = each(cx, self.profiles, ProfileDraft::validate);
        let (mut numa, numa_valid) = each(cx, self.numa, NumaDraft::validate);
        profiles.sort_by(|left, right| left.profile.cmp(&right.profile));
        numa.sort_by_key(|node| node.id);
        let cpu = Cpu {
            harts: harts?,
            cores: cores?,
            sockets: sockets?,
            isa: isa?,
            numa_nodes: numa_nodes?.unwrap_or(1),
            model: model?,
            vector: vector?,
            profiles,
            numa,
        };
        (profiles_valid && numa_valid).then_some(cpu)
    }
}

impl ProfileDraft {
    /// The verdict must agree with the lists, so a hand edit cannot leave a file that says
    /// `meets` while listing missing extensions.
    fn validate(self, cx: &mut Cx) -> Option<ProfileVerdict> {
        let profile = self.profile.and_then(|profile| values::name(cx, &profile));
        let verdict_choices: Vec<(&str, Verdict)> = Verdict::ALL.iter().map(|verdict| (verdict.as_str(), *verdict)).collect();
        let verdict = self.verdict.and_then(|verdict| values::keyword(cx, &verdict, Some("verdict"), &verdict_choices));
        let missing = extension_names(cx, self.missing);
        let unverifiable = extension_names(cx, self.unverifiable);
        let profile = ProfileVerdict { profile: profile?.value, missing: missing?, unverifiable: unverifiable? };
        let verdict = verdict?;
        if profile.verdict() != verdict {
            cx.error(
                Diagnostic::error(
                    Code::InvalidValue,
                    self.span,
                    format!(
                        "profile `{}` says `{}` but its lists mean `{}`",
                        profile.profile,
                        verdict.as_str(),
                        profile.verdict().as_str()
                    ),
                )
                .label("inconsistent verdict")
                .help("`missing` wins over `unverifiable`, which wins over `meets`; regenerate the file with placid-probe"),
            );
            return None;
        }
        Some(profile)
    }
}

/// Extension names, sorted and without repeats; the first invalid one is reported.
fn extension_names(cx: &mut Cx, words: Given<Vec<String>>) -> Option<Vec<Name>> {
    let Some(words) = words else {
        return Some(Vec::new());
    };
    let words = words?;
    let mut names = Vec::with_capacity(words.value.len());
    for word in &words.value {
        match Name::new(word) {
            Ok(name) => names.push(name),
            Err(reason) => {
                cx.error(
                    Diagnostic::error(Code::InvalidName, words.span, reason)
                        .label("invalid extension name")
                        .help("list extension names separated by spaces, such as \"zfa zcb\""),
                );
                return None;
            }
        }
    }
    names.sort();
    names.dedup();
    Some(names)
}

impl NumaDraft {
    fn validate(self, cx: &mut Cx) -> Option<NumaNode> {
        let cpus = optional(self.cpus, |cpus| match crate::cpulist::parse(&cpus.value) {
            Ok(set) => Some(set),
            Err(reason) => {
                cx.error(
                    Diagnostic::error(Code::InvalidValue, cpus.span, reason)
                        .label("invalid CPU list")
                        .help("write CPUs as the kernel does, such as \"0-7,16-23\""),
                );
                None
            }
        });
        let memory = optional(self.memory, |memory| values::quantity(cx, &memory, Bytes::parse));
        Some(NumaNode { id: self.id?.value, cpus: cpus?.unwrap_or_else(CpuSet::default), memory: memory? })
    }
}

impl GpuDraft {
    fn validate(self, cx: &mut Cx) -> Option<Gpu> {
        let model = self.model.and_then(|model| values::name(cx, &model));
        let memory = optional(self.memory, |memory| values::quantity(cx, &memory, Bytes::parse));
        let uuid = optional(self.uuid, plain);
        let pci = optional(self.pci, plain);
        let numa = optional(self.numa, plain);
        let mig_enabled = optional(self.mig, |mig| values::keyword(cx, &mig, Some("mig"), MIG_MODES));
        let first_instance = self.instances.first().map(|instance| instance.span);
        let (mut links, links_valid) = each(cx, self.links, LinkDraft::validate);
        let (instances, instances_valid) = each(cx, self.instances, MigDraft::validate);
        let mut ok = links_valid && instances_valid;
        links.sort_by_key(|link| link.peer);
        let mig_enabled = mig_enabled?.unwrap_or(false);
        if !mig_enabled && let Some(first) = first_instance {
            cx.error(
                Diagnostic::error(Code::InvalidValue, first, "MIG instances on a GPU whose MIG mode is disabled")
                    .label("MIG instance")
                    .help("set `mig=\"enabled\"` on the GPU, or remove the instances"),
            );
            ok = false;
        }
        let mig = if mig_enabled { Mig::Enabled { instances } } else { Mig::Disabled };
        let gpu = Gpu {
            index: self.index?.value,
            span: self.span,
            model: model?.value,
            memory: memory?,
            uuid: uuid?,
            pci_bus_id: pci?,
            numa: numa?,
            mig,
            links,
        };
        ok.then_some(gpu)
    }
}

impl MigDraft {
    fn validate(self, cx: &mut Cx) -> Option<MigInstances> {
        let profile = self.profile.and_then(|profile| values::name(cx, &profile));
        let count = optional(self.count, |count| values::positive(cx, count));
        Some(MigInstances { profile: profile?.value, count: count?.unwrap_or(1) })
    }
}

impl LinkDraft {
    fn validate(self, cx: &mut Cx) -> Option<NvLink> {
        let links = optional(self.links, |links| values::positive(cx, links));
        let bandwidth = self.bandwidth.and_then(|bandwidth| values::quantity(cx, &bandwidth, Bandwidth::parse));
        Some(NvLink { peer: self.peer?.value, links: links?.unwrap_or(1), bandwidth: bandwidth?, span: self.span })
    }
}

impl LabelDraft {
    fn validate(self, cx: &mut Cx) -> Option<(LabelKey, String)> {
        values::label(cx, &self.key?, &self.value?)
    }
}
