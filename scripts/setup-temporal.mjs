// Replaced by the Temporal harness (issue 2).
