package runnertest

// scenarios are the kit's tests, in the order Run runs them.
var scenarios = []scenario{
	{"FailureTable", testFailureTable},
	{"RetryCarriesDiagnosis", testRetryCarriesDiagnosis},
	{"RetryBudget", testRetryBudget},
	{"IdempotencyKeys", testIdempotencyKeys},
	{"CannotStartNotRetried", testCannotStartNotRetried},
	{"NoRetryClass", testNoRetryClass},
	{"PanicIsFailure", testPanicIsFailure},
}
