//! Policy tests' admission expectations (`expect "refused-by-admission"`, `expect "admitted"`),
//! evaluated: each job such an expectation is about is written as the workload the build's
//! templates give it (`placid_targets::k8s::TestSubmissions`) and run through the build's own
//! admission policies with placid-admission, as the API server would. The engine compares
//! the verdicts with the expectations (`placid_engine::policy_test::admission`); the engine
//! cannot do this itself, since it may depend on neither the targets nor the CEL runtime.

use placid_admission::{Policies, Verdict};
use placid_lang::checked::Checked;
use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Admission, PolicyTest};
use placid_targets::k8s::TestSubmissions;

/// The build's admission policies, ready to judge the tests' workloads.
pub struct Judge {
    /// `None` without a Kubernetes target (lowering reports an admission expectation there),
    /// or without admission expectations: then nothing is evaluated, and an admission
    /// expectation fails as not evaluated.
    submissions: Option<TestSubmissions>,
}

impl Judge {
    /// Builds the Kubernetes objects of `model` once for all of `tests`, or says why they
    /// cannot be built (the diagnostics `placid build` would give).
    pub fn new(model: &Checked, tests: &[&PolicyTest]) -> Result<Judge, Diagnostics> {
        // Without an admission expectation among the tests run, there is nothing to judge: no
        // build is needed.
        if !tests.iter().flat_map(|test| &test.expects).any(|expect| expect.outcome.is_admission()) {
            return Ok(Judge { submissions: None });
        }
        Ok(Judge { submissions: TestSubmissions::new(model)? })
    }

    /// What the admission policies make of the workload of each job of `test` that an
    /// admission expectation is about, by job index (`None` for the others, and for every job
    /// where nothing is evaluated), or why a workload could not be written or judged.
    pub fn verdicts(&self, model: &Checked, test: &PolicyTest) -> Result<Vec<Option<Admission>>, Diagnostics> {
        let mut verdicts = vec![None; test.jobs.len()];
        let Some(submissions) = &self.submissions else { return Ok(verdicts) };
        let policies = Policies::new(submissions.objects());
        let mut diagnostics = Diagnostics::new();
        for expect in test.expects.iter().filter(|expect| expect.outcome.is_admission()) {
            if verdicts[expect.job].is_some() {
                continue;
            }
            let judged = submissions.workload(model, test, expect.job).and_then(|workload| {
                policies.admit(&workload).map_err(|error| {
                    Diagnostic::error(
                        Code::TestFailed,
                        expect.span,
                        format!("test `{}`: the admission policies could not be evaluated on the job's workload: {error}", test.name),
                    )
                    .label("not evaluated")
                    .help("an admission policy placid writes always evaluates: this is a bug in placid; please report it")
                })
            });
            match judged {
                Ok(Verdict::Admitted(_)) => verdicts[expect.job] = Some(Admission::Admitted),
                Ok(Verdict::Refused { messages, .. }) => verdicts[expect.job] = Some(Admission::Refused(messages)),
                Err(diagnostic) => diagnostics.push(diagnostic),
            }
        }
        if diagnostics.is_empty() { Ok(verdicts) } else { Err(diagnostics) }
    }
}
