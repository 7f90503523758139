//! Each bad trace gets its code at the right line and column, every problem at once.

use placid_lang::diag::{Code, Diagnostics};
use placid_lang::span::FileId;

use super::{TraceJob, read};
use crate::fixture::model;

const FILE: FileId = FileId(7);

fn codes_at(text: &str) -> Vec<(Code, String)> {
    let errors: Diagnostics = read(&model(), FILE, text).expect_err("a bad trace");
    errors
        .iter()
        .map(|diagnostic| (diagnostic.code, text[diagnostic.primary.span.start as usize..diagnostic.primary.span.end as usize].to_owned()))
        .collect()
}

#[test]
fn a_good_trace_resolves_names_and_times() {
    let text = "# two jobs\njob,submit,team,tier,gpus,run,limit,tag\na,0,vision,P1,8,1h30m,2h,prod-sla\nb, 90s ,nlp,P1,1,600,,\n";
    let jobs: Vec<TraceJob> = read(&model(), FILE, text).expect("a good trace");
    assert_eq!(jobs.len(), 2);
    assert_eq!((jobs[0].submit, jobs[0].run, jobs[0].limit, jobs[0].gpus), (0, 5400, Some(7200), 8));
    assert_eq!(jobs[0].tag.as_deref(), Some("prod-sla"));
    assert_eq!((jobs[1].submit, jobs[1].run, jobs[1].limit, jobs[1].tag.as_deref()), (90, 600, None, None));
    assert_eq!(&text[jobs[1].span.start as usize..jobs[1].span.end as usize], "b, 90s ,nlp,P1,1,600,,");
}

#[test]
fn unknown_and_missing_columns_are_named() {
    assert_eq!(codes_at("job,submit,team,tier,gpus,run,limt\n"), [(Code::TraceColumns, "limt".to_owned())]);
    assert_eq!(codes_at("job,submit,team,tier,gpus\n").first().map(|found| found.0), Some(Code::TraceColumns));
    assert_eq!(codes_at("job,job,submit,team,tier,gpus,run\n"), [(Code::TraceColumns, "job".to_owned())]);
}

#[test]
fn every_bad_value_is_reported_at_its_field() {
    let text = "job,submit,team,tier,gpus,run\n\
                a,-5,vision,P1,1,1h\n\
                b,0,visoin,P1,1,1h\n\
                c,0,vision,P1,99999999999,1h\n\
                d,0,vision,P1,1,3x\n\
                e,0,vision,P1,1,99999999999999999999\n\
                a,0,nlp,P1,1,1h\n";
    assert_eq!(
        codes_at(text),
        [
            (Code::TraceValue, "-5".to_owned()),
            (Code::TraceReference, "visoin".to_owned()),
            (Code::TraceValue, "99999999999".to_owned()),
            (Code::TraceValue, "3x".to_owned()),
            (Code::TraceValue, "99999999999999999999".to_owned()),
            (Code::TraceValue, "a".to_owned()),
        ]
    );
}

#[test]
fn a_reference_suggests_the_declared_name() {
    let errors = read(&model(), FILE, "job,submit,team,tier,gpus,run\na,0,visoin,P1,1,1h\n").expect_err("unknown team");
    let help = errors.iter().next().and_then(|diagnostic| diagnostic.help.clone());
    assert_eq!(help.as_deref(), Some("did you mean `vision`?"));
}

#[test]
fn empty_files_and_ragged_lines_are_errors() {
    assert_eq!(codes_at("").first().map(|found| found.0), Some(Code::TraceEmpty));
    assert_eq!(codes_at("job,submit,team,tier,gpus,run\n").first().map(|found| found.0), Some(Code::TraceEmpty));
    assert_eq!(codes_at("job,submit,team,tier,gpus,run\na,0,vision\n"), [(Code::TraceRow, "a,0,vision".to_owned())]);
}

#[test]
fn stages_wait_only_for_stages_that_exist_and_not_for_themselves() {
    let good = "job,submit,team,tier,gpus,run,stage,after\na,0,vision,P1,1,1h,trials,\nb,0,vision,P1,1,1h,finals,trials\n";
    let jobs = read(&model(), FILE, good).expect("a staged trace");
    assert_eq!(jobs[1].after, ["trials"]);
    assert_eq!(
        codes_at("job,submit,team,tier,gpus,run,stage,after\na,0,vision,P1,1,1h,trials,trails\n"),
        [(Code::TraceReference, "trails".to_owned())]
    );
    let cycle = "job,submit,team,tier,gpus,run,stage,after\na,0,vision,P1,1,1h,x,y\nb,0,vision,P1,1,1h,y,x\n";
    assert_eq!(codes_at(cycle), [(Code::TraceValue, "y".to_owned())]);
    let own = "job,submit,team,tier,gpus,run,stage,after\na,0,vision,P1,1,1h,x,x\n";
    assert_eq!(codes_at(own), [(Code::TraceValue, "x".to_owned())]);
}

#[test]
fn quoted_fields_keep_their_columns() {
    let errors = codes_at("job,submit,team,tier,gpus,run\n\"a,1\",0,\"vis,ion\",P1,1,1h\n");
    assert_eq!(errors, [(Code::TraceReference, "\"vis,ion\"".to_owned())]);
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = read(&model(), FILE, &text);
    }
}

/// A trace past [`super::MAX_JOBS`] is refused at its first job over, whose replay would
/// take memory past the limit's measured 600 MB; one at the limit is read, in both bytes
/// and rows within [`super::MAX_BYTES`].
#[test]
fn a_trace_past_the_job_limit_is_refused_at_the_first_job_over() {
    let mut text = String::from("job,submit,team,tier,gpus,run\n");
    for index in 0..super::MAX_JOBS {
        text.push_str(&format!("j{index:07},{index},vision,P1,1,60\n"));
    }
    assert!((text.len() as u64) < super::MAX_BYTES, "a trace at the limit fits the byte limit");
    assert_eq!(read(&model(), FILE, &text).map(|jobs| jobs.len()).map_err(|errors| errors.error_count()), Ok(super::MAX_JOBS));
    text.push_str("over,1,vision,P1,1,60\n");
    assert_eq!(codes_at(&text), [(Code::TraceNotText, "over,1,vision,P1,1,60".to_owned())]);
}
