//! Every error at once: a policy with several independent mistakes reports each of them.
//!
//! The mistakes are the broken examples' (`policy-examples/cluster/broken/`), written as
//! edits of one line of the clean example rather than as the variants' whole files, so that
//! any few of them can be laid over the example together. The property: `placid check` of the
//! example with 2 to 5 of them reports every mistake's code, and no code that none of the
//! mistakes reports alone. A mistake hiding another (an unknown tier silencing its stage's
//! other checks, a team with an error losing its tier check) fails the first half; a mistake
//! inventing errors in the company of another (a spurious E023 next to an E033) the second.
//!
//! Left out: mistakes that break a whole file or the project (E001, E010, E011, E016), which
//! hide the rest of their file by design, and the targets' own checks (E141, E142, E145,
//! E048), which run only on a model without errors.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};

use placid_driver::build::{Selection, Stage, compile_to};
use placid_lang::source::MemoryWorld;
use placid_tests::example;
use proptest::prelude::*;

/// One mistake: the code it is made to produce, and `find` replaced by `replace` in `file`
/// (`find` occurs once in the clean file; mistakes that edit the same line are not combined).
struct Mistake {
    code: &'static str,
    file: &'static str,
    find: &'static str,
    replace: &'static str,
}

const fn mistake(code: &'static str, file: &'static str, find: &'static str, replace: &'static str) -> Mistake {
    Mistake { code, file, find, replace }
}

/// The catalogue, from the broken examples and the language reference's rules.
const MISTAKES: &[Mistake] = &[
    // Tiers: a tier with a mistake of its own is still declared, for suggestions and for
    // the stages, teams and routes that name it.
    mistake("E004", "policy/tiers.kdl", "    priority 100\n", "    priority\n"),
    mistake("E006", "policy/tiers.kdl", "window=\"3m\"", "window=\"3 minutes\""),
    mistake("E025", "policy/tiers.kdl", "    priority 500\n", "    priority 1200\n"),
    mistake("E021", "policy/tiers.kdl", "reserve pool=\"nvl-a\" gpus=12", "reserve pool=\"nvl-a\" gpus=20"),
    mistake(
        "E022",
        "policy/tiers.kdl",
        "    checkpoint every=\"15m\"\n",
        "    checkpoint every=\"15m\"\n    reserve pool=\"nvl-a\" gpus=8\n",
    ),
    mistake("E161", "policy/tiers.kdl", "budget daily=(usd)4000", "budget daily=(usd)20000"),
    mistake("E160", "policy/tiers.kdl", "    max-time \"7d\"\n", "    max-time \"7d\"\n    budget daily=(usd)800\n"),
    // Teams and cost centers.
    mistake("E002", "policy/teams.kdl", "    share 40\n", "    shares 40\n    share 40\n"),
    mistake("E005", "policy/teams.kdl", "    share 30\n    cost-center \"prod-ml\"", "    share \"thirty\"\n    cost-center \"prod-ml\""),
    mistake("E009", "policy/teams.kdl", "team \"research\" {", "team \"research team\" {"),
    mistake("E015", "policy/teams.kdl", "budget daily=(usd)3000", "budget daily=(eur)3000"),
    mistake(
        "E026",
        "policy/teams.kdl",
        "cost-center \"prod-ml\" { budget daily=(usd)12000 }",
        "cost-center \"prod-ml\" { budget daily=(usd)800 }",
    ),
    mistake("E027", "policy/teams.kdl", "budget daily=(usd)6000", "budget daily=(usd)10000"),
    // Pools.
    mistake("E003", "policy/hardware.kdl", "capacity=\"spot\"", "capcity=\"spot\""),
    mistake(
        "E007",
        "policy/hardware.kdl",
        "pool \"nvlink\" { select arch=\"riscv64\" }\n",
        "pool \"nvlink\" { select arch=\"riscv64\" }\npool \"nvl-a\" { select arch=\"x86_64\" }\n",
    ),
    mistake(
        "E012",
        "policy/hardware.kdl",
        "pool \"x86\" { select arch=\"x86_64\" }",
        "pool \"x86\" { select arch=\"x86_64\" arch=\"riscv64\" }",
    ),
    mistake(
        "E020",
        "policy/hardware.kdl",
        "pool \"nvl-b\" { select nvlink-domain=\"nvl-b\" }\n",
        "pool \"nvl-b\" { select nvlink-domain=\"nvl-b\" }\npool \"arm\" { select arch=\"aarch64\" }\n",
    ),
    // Classes.
    mistake("E032", "policy/classes.kdl", "    locality \"rack\"\n", "    locality \"rack\"\n    mig \"1g.18gb\"\n"),
    mistake("E165", "policy/classes.kdl", "lanes=6", "lanes=7"),
    mistake("E166", "policy/classes.kdl", "min-bandwidth=\"900GB/s\" lanes=6", "min-bandwidth=\"900GB/s\" lanes=6 min-bisection=\"8TB/s\""),
    mistake(
        "E024",
        "policy/classes.kdl",
        "platforms \"linux/amd64\" \"linux/riscv64\"\n}\nclass \"data-parallel\"",
        "platforms \"linux/amd64\"\n}\nclass \"data-parallel\"",
    ),
    // Plans: each on its own stage.
    mistake("E008", "policy/plans.kdl", "stage \"finetune\" tier=\"P0\"", "stage \"finetune\" tier=\"P00\""),
    mistake("E023", "policy/plans.kdl", "class=\"model-parallel\" pool=\"nvl-a\" gpus=8", "class=\"eval\" pool=\"nvl-a\" gpus=8"),
    mistake("E130", "policy/plans.kdl", "after=\"sweep\" time=\"20h\" max-time=\"30h\"", "after=\"sweep\" time=\"20h\" max-time=\"3d\""),
    mistake("E030", "policy/plans.kdl", "stage \"finalists\" tier=\"P1\"", "stage \"finalists\" tier=\"P0\""),
    mistake("E033", "policy/plans.kdl", "class=\"data-parallel\" pool=\"x86-spot\"", "class=\"model-parallel\" pool=\"x86-spot\""),
    mistake("E031", "policy/plans.kdl", "class=\"eval\" pool=\"x86\" gpus=1", "class=\"eval\" pool=\"x86\" gpus=40"),
    mistake(
        "E029",
        "policy/plans.kdl",
        "    stage \"sweep\" tier=\"P2\"",
        "    stage \"early\" tier=\"P2\" pool=\"x86\" gpus=1 after=\"sweep\"\n    stage \"sweep\" tier=\"P2\"",
    ),
    // A class, a pool and a route with an error of their own.
    mistake("E005", "policy/classes.kdl", "    comm \"low\"\n", "    comm \"lowest\"\n"),
    mistake(
        "E005",
        "policy/hardware.kdl",
        "    select arch=\"x86_64\"\n    select nvlink-domain",
        "    select arch=\"x86\"\n    select nvlink-domain",
    ),
    mistake("E008", "policy/routes.kdl", "route tag=\"sweep\" tier=\"P2\"", "route tag=\"sweep\" tier=\"P22\""),
    mistake("E008", "policy/plans.kdl", "plan \"asr-sweep\" team=\"speech\"", "plan \"asr-sweep\" team=\"speeches\""),
    // Policy tests.
    mistake("E035", "policy/tests.kdl", "reason=\"domain-too-small\"", "reason=\"domain-too-tiny\""),
];

/// The clean example's files, by path relative to its root.
fn clean_files() -> &'static BTreeMap<String, String> {
    static FILES: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = example("cluster");
        let mut files = BTreeMap::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in
                std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display())).filter_map(Result::ok)
            {
                let path = entry.path();
                if path.is_dir() {
                    if entry.file_name() != "broken" {
                        stack.push(path);
                    }
                } else if let Ok(relative) = path.strip_prefix(&root)
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    files.insert(relative.to_string_lossy().replace('\\', "/"), text);
                }
            }
        }
        files
    })
}

/// The line of the clean file that mistake `index` edits.
fn line_of(index: usize) -> (&'static str, usize) {
    let mistake = &MISTAKES[index];
    let text = &clean_files()[mistake.file];
    let at = text.find(mistake.find).unwrap_or_else(|| panic!("{}: `{}` not in {}", mistake.code, mistake.find, mistake.file));
    (mistake.file, text[..at].matches('\n').count())
}

/// The codes `placid check` reports for the example with `mistakes` applied.
fn codes(mistakes: &[usize]) -> BTreeSet<String> {
    let mut files = clean_files().clone();
    for &index in mistakes {
        let mistake = &MISTAKES[index];
        let text = files.get_mut(mistake.file).unwrap_or_else(|| panic!("no file {}", mistake.file));
        *text = text.replacen(mistake.find, mistake.replace, 1);
    }
    let mut world = MemoryWorld::new();
    for (path, text) in files {
        world.insert(&path, text);
    }
    let build = compile_to(&world, &Selection { only: Vec::new() }, Stage::Validated);
    build.diagnostics.iter().map(|diagnostic| diagnostic.code.id().trim_start_matches("placid::").to_owned()).collect()
}

/// The codes each mistake reports alone, computed once.
fn alone(index: usize) -> BTreeSet<String> {
    static ALONE: OnceLock<Mutex<BTreeMap<usize, BTreeSet<String>>>> = OnceLock::new();
    let cache = ALONE.get_or_init(|| Mutex::new(BTreeMap::new()));
    if let Some(found) = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&index) {
        return found.clone();
    }
    let found = codes(&[index]);
    cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(index, found.clone());
    found
}

#[test]
fn each_mistake_alone_reports_its_code() {
    for (index, mistake) in MISTAKES.iter().enumerate() {
        assert_eq!(clean_files()[mistake.file].matches(mistake.find).count(), 1, "{}: `{}` must occur once", mistake.code, mistake.find);
        let found = alone(index);
        assert!(found.contains(mistake.code), "{} alone reports {found:?}", mistake.code);
    }
}

/// Pairs of mistakes that are not independent, since one rule reads what both change, each
/// side a mistake's code or a text of its replacement: a reservation larger than its pool is
/// E021's and is not added into E022's sum of the reservations that fit; a team budget in
/// another currency (E015) is in no sum of budgets, so the sums of E027 and E161 are unknown;
/// a plan whose team is unknown has no tier permissions to break (E030).
const DEPENDENT: &[(&str, &str)] = &[("E021", "E022"), ("E015", "E027"), ("E015", "E161"), ("team=\"speeches\"", "E030")];

fn independent(picked: &[usize]) -> bool {
    let lines: BTreeSet<_> = picked.iter().map(|&index| line_of(index)).collect();
    let is = |side: &str| picked.iter().any(|&index| MISTAKES[index].code == side || MISTAKES[index].replace.contains(side));
    lines.len() == picked.len() && !DEPENDENT.iter().any(|(one, other)| is(one) && is(other))
}

/// Indices of 2 to 5 independent mistakes.
fn combination() -> impl Strategy<Value = Vec<usize>> {
    proptest::sample::subsequence((0..MISTAKES.len()).collect::<Vec<_>>(), 2..=5)
        .prop_filter("mistakes that are not independent", |picked| independent(picked))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_mistake_is_reported_and_nothing_else(picked in combination()) {
        let found = codes(&picked);
        let names: Vec<&str> = picked.iter().map(|&index| MISTAKES[index].code).collect();
        for &index in &picked {
            prop_assert!(found.contains(MISTAKES[index].code), "{names:?}: {} missing from {found:?}", MISTAKES[index].code);
        }
        let possible: BTreeSet<String> = picked.iter().flat_map(|&index| alone(index)).collect();
        let extra: Vec<&String> = found.difference(&possible).collect();
        prop_assert!(extra.is_empty(), "{names:?}: {extra:?} reported, which no mistake reports alone ({found:?})");
    }
}

/// Every pair, exhaustively (a second or two): the proptest above goes on to larger sets.
#[test]
fn every_pair_of_independent_mistakes_reports_both_and_nothing_else() {
    let mut failures = Vec::new();
    let pairs = (0..MISTAKES.len()).flat_map(|first| (first + 1..MISTAKES.len()).map(move |second| (first, second)));
    for (first, second) in pairs.filter(|&(first, second)| independent(&[first, second])) {
        let found = codes(&[first, second]);
        let possible: BTreeSet<String> = alone(first).union(&alone(second)).cloned().collect();
        let missing: Vec<&str> = [first, second].iter().map(|&index| MISTAKES[index].code).filter(|code| !found.contains(*code)).collect();
        let extra: Vec<&String> = found.difference(&possible).collect();
        if !missing.is_empty() || !extra.is_empty() {
            failures.push(format!("{} + {}: missing {missing:?}, extra {extra:?}", MISTAKES[first].code, MISTAKES[second].code));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
