//! RVA22U64 and RVA23U64 verdicts (riscv/riscv-profiles, src/profiles.adoc and
//! src/rva23-profile.adoc). /proc/cpuinfo proves presence only, so each verdict is three-valued:
//! an extension the kernel can report but does not is *missing*; one that kernels cannot
//! report (a property of the memory system, like `ziccif`) is *unverifiable*.

use std::collections::BTreeSet;

use placid_lang::model::ProfileVerdict;
use placid_lang::name::Name;

/// RVA22U64 mandatory extensions, with `B` spelled as `zba zbb zbs`.
const RVA22U64: &[&str] = &[
    "m",
    "a",
    "f",
    "d",
    "c",
    "zicsr",
    "zicntr",
    "zihpm",
    "ziccif",
    "ziccrse",
    "ziccamoa",
    "zicclsm",
    "za64rs",
    "zba",
    "zbb",
    "zbs",
    "zihintpause",
    "zic64b",
    "zicbom",
    "zicbop",
    "zicboz",
    "zfhmin",
    "zkt",
];

/// What RVA23U64 adds to RVA22U64.
const RVA23U64_EXTRA: &[&str] = &["v", "zvfhmin", "zvbb", "zvkt", "zihintntl", "zicond", "zimop", "zcmop", "zcb", "zfa", "zawrs", "supm"];

/// Mandatory "extensions" that are properties of the platform; kernels before the series
/// adding them to `riscv_isa_ext[]` never print them, so their absence proves nothing.
const NOT_REPORTED_BY_OLDER_KERNELS: &[&str] = &["ziccif", "ziccrse", "ziccamoa", "zicclsm", "za64rs", "zic64b"];

/// The profiles the probe judges, in output order.
pub fn verdicts(extensions: &BTreeSet<String>) -> Vec<ProfileVerdict> {
    let rva23: Vec<&str> = RVA22U64.iter().chain(RVA23U64_EXTRA).copied().collect();
    [("rva22u64", RVA22U64), ("rva23u64", &rva23[..])]
        .into_iter()
        .filter_map(|(profile, mandatory)| verdict(profile, mandatory, extensions))
        .collect()
}

fn verdict(profile: &str, mandatory: &[&str], extensions: &BTreeSet<String>) -> Option<ProfileVerdict> {
    let mut missing = Vec::new();
    let mut unverifiable = Vec::new();
    for extension in mandatory.iter().filter(|extension| !extensions.contains(**extension)) {
        let name = Name::new(extension).ok()?;
        if NOT_REPORTED_BY_OLDER_KERNELS.contains(extension) { unverifiable.push(name) } else { missing.push(name) }
    }
    missing.sort();
    unverifiable.sort();
    Some(ProfileVerdict { profile: Name::new(profile).ok()?, missing, unverifiable })
}
