//! The results-file convention of plans that promote, shared by the Slurm promotion job and
//! the Kubernetes promotion step so both rank trials the same way (docs/targets/slurm.md,
//! "Results files"): each trial `T` of stage `S` writes `$results/S/T.result`, lines
//! `<metric> <number>`; the ranking writes `$results/S.promoted`, `<trial> <value>` lines,
//! best first, at most `top`, ties to the lower trial.
//!
//! Invariant: the script is fixed text. It reads the shell variables `results`, `stage`,
//! `metric`, `top` and `sort_order` (`-g` lowest first, `-gr` highest first), which each target
//! sets with its own quoting. Trial names are the file names trials chose, so only whole
//! numbers are ranked: a name that is anything else could not be a trial, and the Kubernetes
//! step prints the winners into a JSON list.

/// Ranks the trials' results into `$results/$stage.promoted`; exits 1 when no trial reported
/// the metric.
pub const RANK_TRIALS: &str = r#"ranked=$(for file in "$results/$stage"/*.result; do
    [ -f "$file" ] || continue
    task=$(basename "$file" .result)
    case "$task" in ''|*[!0-9]*) continue ;; esac
    awk -v metric="$metric" -v task="$task" \
        '$1 == metric && $2 ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ { print task, $2; exit }' "$file"
done | sort -k2,2 $sort_order -k1,1n | head -n "$top")
if [ -z "$ranked" ]; then
    echo "placid: no trial of stage $stage reported $metric in $results/$stage" >&2
    exit 1
fi
printf '%s\n' "$ranked" > "$results/$stage.promoted.tmp"
mv "$results/$stage.promoted.tmp" "$results/$stage.promoted"
"#;

/// The `sort` flags of a ranking order.
pub fn sort_order(order: placid_lang::model::Direction) -> &'static str {
    if order == placid_lang::model::Direction::Min { "-g" } else { "-gr" }
}
