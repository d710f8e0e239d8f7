"""The hostile corpus (issue 30): bad and extreme inputs to every entry point, each judged
by one rule (:mod:`corpus.harness`)."""
